#!/usr/bin/python3
"""Runs real validators on the deployment files; prints what each says and exits 1 if any fails.

  deploy/validate.py [--deploy deploy] [--kubernetes-version 1.33.0]
  deploy/validate.py --venv-only      (make the validators' venv; scripts/setup.sh --with-bench runs this)

* kubernetes-validate --strict against Kubernetes' published schema of --kubernetes-version (pinned here: 1.33.0):
  every manifest under deploy/kubernetes, unknown fields refused;
* hadolint on deploy/Containerfile (each rule it ignores is named and explained beside the instruction);
* yamllint --strict with deploy/.yamllint on every YAML file under deploy (the house style; warnings fail too).
(deploy/check.py checks the files against the binary's own flags, and the test suite runs systemd-analyze verify.)

The validators live in a venv of their own, ${XDG_CACHE_HOME:-~/.cache}/facewire/deploy-venv, installed from PyPI
with hashes pinned in deploy/validators-requirements.txt.
"""
import argparse
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "benchmarks"))
import pinned_venv  # noqa: E402  (benchmarks/pinned_venv.py)

CACHE = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
VENV = os.path.join(CACHE, "facewire", "deploy-venv")
REQUIREMENTS = os.path.join(HERE, "validators-requirements.txt")

parser = argparse.ArgumentParser()
parser.add_argument("--deploy", default=HERE)
parser.add_argument("--kubernetes-version", default="1.33.0")
parser.add_argument("--venv-only", action="store_true")
args = parser.parse_args()


def venv_bin(name):
    return os.path.join(VENV, "bin", name)


pinned_venv.make(VENV, REQUIREMENTS)
if args.venv_only:
    sys.exit(0)

deploy = args.deploy
manifests = sorted(glob.glob(os.path.join(deploy, "kubernetes", "**", "*.yaml"), recursive=True))
runs = [
    ("kubernetes-validate", [venv_bin("kubernetes-validate"), "--strict", "--kubernetes-version",
                             args.kubernetes_version, "--no-warn"] + manifests),
    ("hadolint", [venv_bin("hadolint"), "--no-color", os.path.join(deploy, "Containerfile")]),
    ("yamllint", [venv_bin("yamllint"), "--strict", "-c", os.path.join(deploy, ".yamllint"), deploy]),
]
failed = []
for name, command in runs:
    run = subprocess.run(command, capture_output=True, text=True)
    output = (run.stdout + run.stderr).strip()
    print(f"== {name}: {'ok' if run.returncode == 0 else f'FAILED (exit {run.returncode})'}")
    if output:
        print(output)
    if run.returncode != 0:
        failed.append(name)
print(f"{len(manifests)} Kubernetes manifests (schema {args.kubernetes_version}, strict), the Containerfile, "
      f"every YAML file: {'failed: ' + ', '.join(failed) if failed else 'all pass'}")
sys.exit(1 if failed else 0)
