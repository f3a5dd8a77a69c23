# Backs BENCHMARKS.md, "Face attributes on public sets": "Pitch misses its target" (the nineteen variants tried).
"""Head-pitch candidates on GENKI-4K (RESULTS-mesh.md, "Head pitch: candidates"). Measurement only: nothing here is
fitted on GENKI; every candidate is a fixed method and the table reports its errors against GENKI's labels.

    /usr/bin/python3 evaluation/research/cache_mesh.py genki     # once
    /usr/bin/python3 evaluation/research/measure_pitch.py

Angles are read from each fit's rotation exactly as meshattr.head_pose does. "debiased" (pitch error minus its own
median on GENKI) is a diagnostic of scatter only: it would need an offset taken from GENKI, which is not allowed.
MEDIAPIPE_BASIS is MediaPipe's procrustes_landmark_basis (mediapipe/modules/face_geometry/data/
geometry_pipeline_metadata_landmarks.pbtxt, Copyright 2020 The MediaPipe Authors, Apache-2.0).
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "expressions"))  # fwexpr, meshattr
import cache_mesh as cm  # noqa: E402
import meshattr as ma  # noqa: E402

MEDIAPIPE_BASIS = {
    4: 0.070909939706326, 6: 0.032100144773722, 10: 0.008446550928056, 33: 0.058724168688059,
    54: 0.007667080033571, 67: 0.009078059345484, 117: 0.009791937656701, 119: 0.014565368182957,
    121: 0.018591361120343, 127: 0.005197994410992, 129: 0.120625205338001, 132: 0.005560018587857,
    133: 0.05328618362546, 136: 0.066890455782413, 143: 0.014816547743976, 147: 0.014262833632529,
    198: 0.025462191551924, 205: 0.047252278774977, 263: 0.058724168688059, 284: 0.007667080033571,
    297: 0.009078059345484, 346: 0.009791937656701, 348: 0.014565368182957, 350: 0.018591361120343,
    356: 0.005197994410992, 358: 0.120625205338001, 361: 0.005560018587857, 362: 0.05328618362546,
    365: 0.066890455782413, 372: 0.014816547743976, 376: 0.014262833632529, 420: 0.025462191551924,
    425: 0.047252278774977}
CA = np.array([ma.CANON_ALL[i] for i in range(468)])
RIG = list(ma.RIGID)
MPI = sorted(MEDIAPIPE_BASIS)
MPW = np.array([MEDIAPIPE_BASIS[i] for i in MPI])
SILHOUETTE = [234, 454, 127, 356, 93, 323, 132, 361, 162, 389, 21, 251]
JAW_CHEEK = (136, 365, 132, 361, 147, 376, 205, 425)
MIDLINE_CORNERS = [1, 4, 6, 9, 10, 151, 168, 195, 197, 33, 133, 362, 263]


def Q_of(m, zk=1.0):
    """y-up, z-toward-camera frame of meshattr.fit_canonical; zk scales the network's z."""
    return np.stack([m[:, 0], -m[:, 1], -zk * m[:, 2]], 1)


def wproc(C, Q, w):
    """Weighted similarity Procrustes (as MediaPipe's SolveWeightedOrthogonalProblem): Q ~ s R C + t."""
    w = np.asarray(w, float) / np.sum(w)
    cm_, qm = w @ C, w @ Q
    dc, dq = C - cm_, Q - qm
    U, sv, Vt = np.linalg.svd((dq * w[:, None]).T @ dc)
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
    R = U @ D @ Vt
    s = float(np.sum(sv * np.diag(D)) / (w @ (dc * dc).sum(1)))
    return s, R, qm - s * R @ cm_


def rotvec(w):
    th = float(np.linalg.norm(w))
    if th < 1e-12:
        return np.eye(3)
    k = w / th
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(th) * K + (1 - math.cos(th)) * K @ K


def ortho(C, q, w, s, R, t, iters=ma.POSE_ITERATIONS):
    """Weighted 2-D orthographic fit q ~ s P R C + t (meshattr.fit_orthographic with weights)."""
    w = np.asarray(w, float)
    tx, ty = t[0], t[1]
    n = len(q)
    z0, o = np.zeros(n), np.ones(n)
    for _ in range(iters):
        U = C @ R.T
        rx, ry = s * U[:, 0] + tx - q[:, 0], s * U[:, 1] + ty - q[:, 1]
        Jx = np.stack([z0, s * U[:, 2], -s * U[:, 1], U[:, 0], o, z0], 1)
        Jy = np.stack([-s * U[:, 2], z0, s * U[:, 0], U[:, 1], z0, o], 1)
        A = (Jx * w[:, None]).T @ Jx + (Jy * w[:, None]).T @ Jy
        d = np.linalg.solve(A, -((Jx * w[:, None]).T @ rx + (Jy * w[:, None]).T @ ry))
        R = rotvec(d[:3]) @ R
        s, tx, ty = s + d[3], tx + d[4], ty + d[5]
    return s, R, (tx, ty)


def angles(R):
    fx, fy, fz = R[0][2], R[1][2], R[2][2]
    return (math.degrees(math.atan2(fx, fz)), math.degrees(math.atan2(fy, math.hypot(fx, fz))),
            math.degrees(math.atan2(-R[1][0], R[0][0])))


def fit3(idx, w=None, zk=1.0):
    w = np.ones(len(idx)) if w is None else w
    return lambda m, shape: angles(wproc(CA[idx], Q_of(m, zk)[idx], w)[1])


def fit2(idx, w=None):
    w = np.ones(len(idx)) if w is None else w

    def f(m, shape):
        Q = Q_of(m)[idx]
        return angles(ortho(CA[idx], Q[:, :2], w, *wproc(CA[idx], Q, w))[1])
    return f


def free_z(m, shape, iters=10):
    """3-D fit with a per-face scale k on the network's z, alternated with the Procrustes fit."""
    C, Q, w, k = CA[RIG], Q_of(m)[RIG], np.ones(len(RIG)), 1.0
    for _ in range(iters):
        s, R, t = wproc(C, Q * np.array([1.0, 1.0, k]), w)
        pz = (C @ R.T * s)[:, 2]
        qz, pz = Q[:, 2] - Q[:, 2].mean(), pz - pz.mean()
        k = float(qz @ pz / (qz @ qz))
    return angles(R)


def ratio_z(m, shape):
    """3-D fit, z scaled so the mesh's depth-range / eye-corner-width equals the canonical model's (per face)."""
    c, q = CA[RIG], Q_of(m)[RIG]
    k = (np.ptp(c[:, 2]) / np.linalg.norm(CA[263] - CA[33])) / \
        (np.ptp(q[:, 2]) / np.linalg.norm(Q_of(m)[263][:2] - Q_of(m)[33][:2]))
    return angles(wproc(c, Q_of(m, k)[RIG], np.ones(len(RIG)))[1])


def mediapipe_pipeline(m, shape, fov=63.0, near=1.0):
    """MediaPipe face_geometry ScreenToMetricSpaceConverter (FACE_LANDMARK_PIPELINE, TOP_LEFT origin) on the whole
    GENKI image: project onto the near plane, two scale passes, unproject with the perspective frustum, weighted
    Procrustes on the basis -> the rotation of facial_transformation_matrixes."""
    H, W = shape
    hn = 2 * near * math.tan(math.radians(fov) / 2)
    wn = W * hn / H
    S = np.stack([m[:, 0] / W * wn - wn / 2, (1 - m[:, 1] / H) * hn - hn / 2, m[:, 2] / W * wn], 1)
    off = S[:, 2].mean()
    C = CA[MPI]

    def unproject(scale):
        U = S.copy()
        U[:, 2] = (U[:, 2] - off + near) / scale
        U[:, 0] *= U[:, 2] / near
        U[:, 1] *= U[:, 2] / near
        U[:, 2] *= -1
        return U
    first = S * np.array([1.0, 1.0, -1.0])
    s1 = wproc(C, first[MPI], MPW)[0]
    s2 = wproc(C, unproject(s1)[MPI], MPW)[0]
    return angles(wproc(C, unproject(s1 * s2)[MPI], MPW)[1])


def perspective2d(m, shape, fov=63.0, iters=10):
    """2-D fit with a pinhole camera of vertical FOV 63 deg on the GENKI image, principal point at its centre."""
    H, W = shape
    f = (H / 2) / math.tan(math.radians(fov) / 2)
    C = CA[RIG]
    q = np.stack([m[RIG, 0] - W / 2, -(m[RIG, 1] - H / 2)], 1).T.reshape(-1)
    w = np.ones(len(RIG))
    s0, R0, t0 = wproc(C, Q_of(m)[RIG], w)
    s, R, t = ortho(C, q.reshape(2, -1).T, w, s0, R0, (t0[0] - W / 2, t0[1] + H / 2))
    p = np.array([0.0, 0.0, 0.0, t[0] / s, t[1] / s, f / s])

    def proj(p, R):
        X = C @ (rotvec(p[:3]) @ R).T + np.array([p[3], p[4], 0.0])
        den = p[5] - X[:, 2]
        return np.concatenate([f * X[:, 0] / den, f * X[:, 1] / den])
    for _ in range(iters):
        r0 = proj(p, R) - q
        J = np.empty((len(r0), 6))
        for k in range(6):
            dp = np.zeros(6)
            dp[k] = 1e-6 if k < 3 else 1e-5 * max(1.0, abs(p[k]))
            J[:, k] = (proj(p + dp, R) - proj(p, R)) / dp[k]
        d = np.linalg.lstsq(J, -r0, rcond=None)[0]
        R = rotvec(p[:3] + d[:3]) @ R
        p = np.concatenate([[0.0, 0.0, 0.0], p[3:] + d[3:]])
    return angles(R)


CANDIDATES = [
    ("**current**: 2-D orthographic, RIGID (29 points)", lambda m, sh: ma.head_pose(m)),
    ("3-D Horn (network z as is), RIGID", fit3(RIG)),
    ("2-D, MediaPipe basis (33) with its weights", fit2(MPI, MPW)),
    ("3-D, MediaPipe basis with its weights", fit3(MPI, MPW)),
    ("2-D, MediaPipe basis unweighted", fit2(MPI)),
    ("3-D, MediaPipe basis unweighted", fit3(MPI)),
    ("2-D, MediaPipe basis minus jaw/cheek (25)", fit2([i for i in MPI if i not in JAW_CHEEK])),
    ("2-D, RIGID + MediaPipe basis", fit2(sorted(set(RIG) | set(MPI)))),
    ("2-D, RIGID + silhouette (41)", fit2(RIG + SILHOUETTE)),
    ("3-D, RIGID + silhouette", fit3(RIG + SILHOUETTE)),
    ("2-D, midline + eye corners (13)", fit2(MIDLINE_CORNERS)),
    ("2-D, all 468", fit2(list(range(468)))),
    ("3-D, all 468", fit3(list(range(468)))),
    ("3-D RIGID, per-face free z scale", free_z),
    ("3-D RIGID, z scaled by canonical/mesh depth-to-eye-width ratio", ratio_z),
    ("MediaPipe geometry pipeline (basis + weights, perspective, FOV 63, near 1, GENKI image)", mediapipe_pipeline),
    ("2-D perspective, RIGID, FOV 63 on the GENKI image", perspective2d),
    ("(sweep, no principled basis) 3-D MediaPipe basis, z x 0.5", fit3(MPI, MPW, 0.5)),
    ("(sweep, no principled basis) 3-D MediaPipe basis, z x 0.75", fit3(MPI, MPW, 0.75)),
]


def main():
    d = np.load(os.path.join(cm.CACHE, "genki.npz"), allow_pickle=True)
    lab = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1:]
           for l in open(os.path.join(cm.EXPR, "genki/labels.tsv")).readlines()[1:]}
    keys = list(d["key"])
    L = np.degrees(np.array([[float(v) for v in lab[k][1:4]] for k in keys]))  # yaw, pitch, roll
    print(f"N {len(keys)}; degrees; median abs error (median signed error)")
    print("| candidate | yaw | roll | pitch | pitch corr | GENKI-on-ours slope | pitch debiased (diagnostic) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, fn in CANDIDATES:
        P = np.array([fn(m, sh) for m, sh in zip(d["mesh1"], d["shape"])])
        E = P - L
        a, s = np.median(np.abs(E), 0), np.median(E, 0)
        ep = E[:, 1] - s[1]
        print(f"| {name} | {a[0]:.2f} ({s[0]:+.2f}) | {a[2]:.2f} ({s[2]:+.2f}) | {a[1]:.2f} ({s[1]:+.2f}) | "
              f"{np.corrcoef(P[:, 1], L[:, 1])[0, 1]:.3f} | {np.polyfit(P[:, 1], L[:, 1], 1)[0]:.2f} | "
              f"{np.median(np.abs(ep)):.2f} |", flush=True)
    print(f"| reference: constant 0 | {np.median(np.abs(L[:, 0])):.2f} | {np.median(np.abs(L[:, 2])):.2f} | "
          f"{np.median(np.abs(L[:, 1])):.2f} | | | |")


if __name__ == "__main__":
    main()
