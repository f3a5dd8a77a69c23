#!/usr/bin/python3
"""The deploy files in real containers: builds the image's runtime stage around a binary built on this host, starts
deploy/compose.yaml's cluster with 4 workers on a real clip, follows it from the host with `facewire --role tail`,
kills one worker container and checks that the stream keeps its order and accounts for every frame.

  deploy/container-test.py --binary .build/debug/facewire [--clip FILE] [--frames-before 60] [--frames-after 150]
  deploy/container-test.py --binary … --check     (only: does docker run here? exit 0, or 77 saying why not)

Needs docker (Debian's docker.io; a stopped dockerd is started), docker-compose and debootstrap. No registry image is
pulled: the base is Debian 12 made with `debootstrap --variant=minbase` (cached as facewire-base:bookworm), and the
image is `deploy/Containerfile --target prebuilt` (the stage a user's `docker build` ends with, `runtime`, differs only
in where the binary, the Swift runtime, the models and OpenVINO come from). Exits 0 when every check passes, 1 when
one fails, 77 when docker cannot run here (the test suite then skips, saying so). Prints what it measured: the image
size, the containers' user and filesystem, frames and drops.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import lifeline  # noqa: E402
from ports import free_ports  # noqa: E402

lifeline.install()
CACHE = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
DOCKER = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else shutil.which("docker") or "docker"
BASE = "facewire-base:bookworm"
IMAGE = "facewire-container-test:latest"
PROJECT = f"fwct{os.getpid()}"

parser = argparse.ArgumentParser()
parser.add_argument("--binary", required=True)
parser.add_argument("--clip", default=os.path.join(CACHE, "facewire/demo/astronaut.avi"))
parser.add_argument("--frames-before", type=int, default=60, help="frames seen before a worker is killed")
parser.add_argument("--frames-after", type=int, default=150, help="frames seen after")
parser.add_argument("--keep", action="store_true", help="leave the containers and the image")
parser.add_argument("--check", action="store_true", help="only see that docker runs (starting dockerd): exit 0 or 77")
args = parser.parse_args()
failures = []


def log(text):
    print(f"[container-test] {text}", file=sys.stderr, flush=True)


def run(command, check=True, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} … failed ({result.returncode}):\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


def docker_ready():
    if shutil.which("dockerd") is None or not os.path.exists(DOCKER):
        skip("no docker here (apt-get install docker.io docker-compose debootstrap; scripts/setup.sh --with-containers)")
    if run([DOCKER, "info"], check=False).returncode == 0:
        return
    log("starting dockerd")
    subprocess.Popen(["dockerd"], stdout=subprocess.DEVNULL, stderr=open("/tmp/facewire-dockerd.log", "w"),
                     start_new_session=True)  # a daemon: it outlives this script on purpose
    for _ in range(60):
        if run([DOCKER, "info"], check=False).returncode == 0:
            return
        time.sleep(0.5)
    skip("dockerd does not start here (see /tmp/facewire-dockerd.log)")


def mirror():
    try:
        for line in open("/etc/apt/sources.list.d/debian.sources"):
            if line.startswith("URIs:"):
                return line.split()[1]
    except OSError:
        pass
    return "http://deb.debian.org/debian"


def base_image():
    if run([DOCKER, "image", "inspect", BASE], check=False).returncode == 0:
        return
    if shutil.which("debootstrap") is None:
        skip("no debootstrap (apt-get install debootstrap) to make the base image")
    root = tempfile.mkdtemp(prefix="facewire-base-")
    try:
        log(f"making {BASE} with debootstrap from {mirror()} (about 30 s)")
        run(["debootstrap", "--variant=minbase", "bookworm", root, mirror()])
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        run([DOCKER, "import", "-", BASE], stdin=tar.stdout)
        tar.wait()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def swift_runtime():
    """The folder of the Swift runtime libraries the binary loads."""
    for line in run(["ldd", args.binary]).stdout.splitlines():
        if "libswiftCore.so" in line and "=>" in line:
            return os.path.dirname(line.split("=>")[1].split()[0])
    raise SystemExit("cannot find the binary's libswiftCore.so")


def build(context):
    prebuilt = os.path.join(context, "prebuilt")
    for folder in ("swift", "models", "openvino"):
        os.makedirs(os.path.join(prebuilt, folder))
    shutil.copy(args.binary, os.path.join(prebuilt, "facewire"))
    for library in glob.glob(os.path.join(swift_runtime(), "*.so")):
        shutil.copy(library, os.path.join(prebuilt, "swift"))
    for model in glob.glob(os.path.join(CACHE, "facewire/models/*.onnx")):
        shutil.copy(model, os.path.join(prebuilt, "models"))
    openvino = os.path.join(CACHE, "facewire/openvino/libs")
    if os.path.isdir(openvino):
        shutil.copytree(openvino, os.path.join(prebuilt, "openvino"), dirs_exist_ok=True)
    log("building the image (the runtime stage: Debian's libraries from the mirror, then the host's binary)")
    started = time.monotonic()
    run([DOCKER, "build", "-q", "-f", os.path.join(HERE, "Containerfile"), "--target", "prebuilt",
         "--build-arg", f"BASE={BASE}", "-t", IMAGE, context], env={**os.environ, "DOCKER_BUILDKIT": "1"})
    size = int(run([DOCKER, "image", "inspect", IMAGE, "--format", "{{.Size}}"]).stdout.strip())
    print(f"image {IMAGE}: {size / 1e6:.0f} MB, built in {time.monotonic() - started:.0f} s")
    return size


def compose(directory, *command, check=True):
    return run(["docker-compose", "-f", os.path.join(directory, "compose.yaml"), "-p", PROJECT] + list(command),
               check=check, env=compose_env)


def containers(service):
    ids = compose(work, "ps", "-q", service).stdout.split()
    return [json.loads(run([DOCKER, "inspect", i]).stdout)[0] for i in ids]


def read_lines(path):
    try:
        return [json.loads(line) for line in open(path) if line.strip()]
    except json.JSONDecodeError:
        return [json.loads(line) for line in open(path).read().splitlines()[:-1] if line.strip()]


def wait_for(path, count, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        frames = [line for line in read_lines(path) if "seq" in line and "event" not in line]
        if len(frames) >= count:
            return frames
        time.sleep(0.5)
    raise SystemExit(f"only {len(read_lines(path))} lines within {timeout} s\n" + compose(work, "logs", "--tail", "20", check=False).stdout[-4000:])


docker_ready()
if shutil.which("docker-compose") is None:
    skip("no docker-compose (apt-get install docker-compose)")
if args.check:
    print("docker runs here")
    sys.exit(0)
if not os.path.isfile(args.clip):
    skip(f"no clip at {args.clip} (scripts/setup.sh makes the demo footage)")
base_image()
work = tempfile.mkdtemp(prefix="facewire-containers-")
control, publish = free_ports(2)
compose_env = {**os.environ, "FACEWIRE_IMAGE": IMAGE, "COLLECTOR_PORT": str(control), "PUBLISH_PORT": str(publish),
               "SOURCE": "/media/clip" + os.path.splitext(args.clip)[1], "VIEW_TOKEN": "unused-container-test-token"}
tail = None
try:
    context = os.path.join(work, "context")
    os.makedirs(context)
    build(context)
    os.makedirs(os.path.join(work, "media"))
    shutil.copy(args.clip, os.path.join(work, "media", "clip" + os.path.splitext(args.clip)[1]))
    os.chmod(os.path.join(work, "media"), 0o755)
    shutil.copy(os.path.join(HERE, "compose.yaml"), os.path.join(work, "compose.yaml"))
    log("docker-compose up: a collector, 4 workers, a capture node")
    compose(work, "up", "-d", "--no-build", "--scale", "worker=4", "collector", "worker", "capture")
    output = os.path.join(work, "tail.jsonl")
    tail = subprocess.Popen([args.binary, "--role", "tail", "--publish", f"tcp://127.0.0.1:{publish}", "--stream", "cam0"],
                            stdout=open(output, "w"), stderr=subprocess.DEVNULL)
    before = wait_for(output, args.frames_before, 180)
    workers = containers("worker")
    running = [c for c in workers if c["State"]["Running"]]
    if len(running) != 4:
        failures.append(f"{len(running)} workers running, not 4")
    victim = running[-1]["Name"].lstrip("/")
    log(f"kill {victim}")
    run([DOCKER, "kill", victim])
    after = wait_for(output, len(before) + args.frames_after, 180)
    tail.terminate()
    tail.wait()
    # Order and accounting: per epoch, every seq from the first seen on exactly once, a dropped run counting its length.
    epochs = {}
    for line in after:
        epochs.setdefault(line["epoch"], []).append(line)
    processed = dropped = faces = 0
    reasons = {}
    for epoch, lines in epochs.items():
        expected = lines[0]["seq"]
        for line in lines:
            if line["seq"] != expected:
                failures.append(f"epoch {epoch}: seq {line['seq']} where {expected} was due")
                break
            expected += line.get("runLength", 1)
            if line["status"] == "processed":
                processed += 1
                faces += len(line["faces"])
            elif line["status"] == "dropped" and line.get("reason"):
                dropped += line.get("runLength", 1)
                reasons[line["reason"]] = reasons.get(line["reason"], 0) + line.get("runLength", 1)
            else:
                failures.append(f"seq {line['seq']}: {line['status']} without a reason")
    print(f"{len(after)} lines in {len(epochs)} epoch(s): {processed} processed ({faces} faces), {dropped} dropped "
          f"{reasons}; one of 4 workers killed after {len(before)} frames")
    if processed < args.frames_after // 2:
        failures.append(f"only {processed} frames processed")
    if faces == 0:
        failures.append("no face found in the clip")
    for container in containers("collector") + containers("capture") + workers[:-1]:
        name, config, host = container["Name"], container["Config"], container["HostConfig"]
        if config.get("User") != "10001:10001" or not host.get("ReadonlyRootfs") or host.get("CapDrop") != ["ALL"]:
            failures.append(f"{name}: user {config.get('User')}, read-only {host.get('ReadonlyRootfs')}, "
                            f"dropped {host.get('CapDrop')}")
    print("every container: uid 10001, read-only root filesystem, every capability dropped" if not any(
        "read-only" in f for f in failures) else "a container is not hardened")
finally:
    if tail and tail.poll() is None:
        tail.kill()
    if not args.keep:
        compose(work, "down", "-v", "--remove-orphans", check=False)
        run([DOCKER, "image", "rm", "-f", IMAGE], check=False)
        shutil.rmtree(work, ignore_errors=True)
for failure in failures:
    print(f"FAILED: {failure}")
sys.exit(1 if failures else 0)
