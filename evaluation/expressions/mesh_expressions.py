"""Six facial-expression scores from MediaPipe's 468-point face mesh (reference for the Swift port).

    expressions(mesh, eye_contours=None) -> {name: (score 0..100, present)}

mesh: 468 x 3 in image px (z on the same scale), as meshattr.Models().run_mesh returns it.
eye_contours (optional): the iris model's two 71-point eye contours, (image-left eye, image-right eye), as
meshattr.Models().run_iris returns them for meshattr.eye_rois(mesh). Only eye_widen uses them; without them eye_widen
falls back to the mesh's own lids (much weaker: the mesh lids barely follow the real lids).

Every feature is measured in MediaPipe's canonical face frame (cm; x toward the image's right, y up, z toward the
camera): P_i = R^T (Q_i - t) / s with Q = (x, -y, -z) and (s, R, t) = meshattr.fit_canonical(mesh) (the default rigid
set). For eye_widen the lid points come from the eye contour: image (x, y) from the contour, z from the mesh point the
contour point replaces (MediaPipe's refinement map), then the same transform.

score = 100 / (1 + exp(-(w . f + b))), present <=> score >= 50. w, b: L2-regularised logistic regression (lambda = 1
on standardised features, classes weighted equally) fitted ONLY on our own labels (Tests/FacewireDetectionTests/Fixtures/action-labels.jsonl,
fit split = even positions of each clip's sorted labelled frames); the operating point (max F1 on the fit split) is
folded into b, so 50 is the operating point. Scores are not calibrated probabilities.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import meshattr as ma  # noqa: E402

# ---- mesh indices ---------------------------------------------------------------------------------------------
BROWS = (70, 63, 105, 66, 107, 300, 293, 334, 296, 336)   # upper brow contour, both sides
FOREHEAD = 151
BROW_INNER_LOW = (55, 285)      # inner brow, lower edge
BROW_INNER_TOP = (107, 336)     # inner brow, upper edge
GLABELLA = 9
EYE_INNER = (133, 362)
MOUTH_L, MOUTH_R = 61, 291
LIP_UP_IN, LIP_LO_IN = 13, 14
LIP_UP_OUT, LIP_LO_OUT = 0, 17
NOSE_TIP = 1
# Lids: contour index 0 = outer corner, 8 = inner corner, 1..7 lower lid, 9..15 upper lid (outer -> inner), and the
# mesh points they stand for (image-left eye, image-right eye).
LID_MAP = ((33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173),
           (263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384, 398))

# ---- weights: (feature names, w, b) ---------------------------------------------------------------------------
MODELS = {
    "brow_raise": (("brow_height", "brow_inner_z"), (7.17141, 51.3452), 24.7242),
    "brow_furrow": (("brow_low_to_eye", "brow_top_to_eye", "brow_inner_gap"), (-22.9111, 12.7633, -0.523995), 14.2548),
    "mouth_open": (("lip_gap",), (6.50263,), -4.02702),
    "eye_widen": (("lid_gap",), (69.559,), -18.6896),                 # with eye contours
    "eye_widen_mesh": (("mesh_lid_gap",), (78.4559,), -15.5259),      # fallback, mesh lids only
    "lip_pucker": (("mouth_width_ratio", "lip_protrusion"), (-17.5897, 1.18338), 26.1546),
    "lip_corner_depressor": (("corner_lift", "lip_gap"), (-12.9114, -3.55016), -0.352797),
}
ORDER = ("brow_raise", "brow_furrow", "mouth_open", "eye_widen", "lip_pucker", "lip_corner_depressor")


def _lid_gap(pts_by_eye):
    """Mean over the eyes of (mean upper-lid y - mean lower-lid y) / |outer corner - inner corner| (3-D)."""
    g = []
    for p in pts_by_eye:      # p: 16 canonical points in LID_MAP order
        w = float(np.linalg.norm(p[0] - p[8]))
        g.append((np.mean(p[9:16, 1]) - np.mean(p[1:8, 1])) / w if w > 1e-9 else 0.0)
    return (g[0] + g[1]) / 2


def features(mesh, eye_contours=None, fit=None):
    mesh = np.asarray(mesh, np.float64)
    fit = fit or ma.fit_canonical(mesh)
    P = np.asarray(ma.to_canonical(mesh, fit))
    y = P[:, 1]
    z = P[:, 2]

    def d(a, b):
        return float(np.linalg.norm(P[a] - P[b]))
    f = {}
    f["brow_height"] = float(np.mean(y[list(BROWS)]) - y[FOREHEAD])
    f["brow_inner_z"] = float((z[55] + z[285]) / 2 - z[GLABELLA])
    f["brow_low_to_eye"] = (d(55, 133) + d(285, 362)) / 2
    f["brow_top_to_eye"] = (d(107, 133) + d(336, 362)) / 2
    f["brow_inner_gap"] = float(P[336, 0] - P[107, 0])
    f["lip_gap"] = float(y[LIP_UP_IN] - y[LIP_LO_IN])
    f["mouth_width_ratio"] = d(MOUTH_L, MOUTH_R) / d(133, 362)
    f["lip_protrusion"] = float((z[LIP_UP_OUT] + z[LIP_LO_OUT]) / 2 - z[NOSE_TIP])
    f["corner_lift"] = float((y[MOUTH_L] + y[MOUTH_R]) / 2 - (y[LIP_UP_IN] + y[LIP_LO_IN]) / 2)
    f["mesh_lid_gap"] = _lid_gap([P[list(m)] for m in LID_MAP])
    if eye_contours is not None:
        eyes = []
        for c, m in zip(eye_contours, LID_MAP):
            c = np.asarray(c, np.float64)
            pts = [(c[k][0], c[k][1], mesh[m[k]][2]) for k in range(16)]
            eyes.append(np.asarray(ma.to_canonical(pts, fit)))
        f["lid_gap"] = _lid_gap(eyes)
    return f


def _score(f, model):
    names, w, b = MODELS[model]
    v = sum(wi * f[n] for wi, n in zip(w, names)) + b
    s = 100.0 / (1.0 + math.exp(-max(-60.0, min(60.0, v))))
    return s, v >= 0.0


def expressions(mesh, eye_contours=None):
    """-> {name: (score 0..100, present)}; present <=> score >= 50."""
    f = features(mesh, eye_contours)
    out = {}
    for name in ORDER:
        model = name if (name != "eye_widen" or "lid_gap" in f) else "eye_widen_mesh"
        out[name] = _score(f, model)
    return out


