"""A venv made once from a requirements file whose every wheel is pinned by hash, for the scripts that run tools
Facewire does not link (the bench venv of bench-python.py, network-floor.py's int8 venv, deploy/validate.py's
validators).

make(venv, requirements, ...) installs with --no-deps --require-hashes --only-binary=:all:, keeps a copy of the
requirements in the venv (facewire-requirements.txt) and makes the venv again only when that file changes.
"""
import os
import subprocess
import sys


def make(venv, requirements, system_site_packages=False, find_links=None):
    """The venv's python; the venv made first (`--clear`) unless it was made from these very requirements.
    `system_site_packages`: it also sees Debian's packages (python3-opencv, python3-zmq); `find_links`: a folder pip
    looks in before PyPI (wheels scripts/setup.sh downloaded)."""
    python = os.path.join(venv, "bin", "python")
    marker = os.path.join(venv, "facewire-requirements.txt")
    wanted = open(requirements).read()
    if os.path.exists(marker) and open(marker).read() == wanted:
        return python
    system = " with the system site packages" if system_site_packages else ""
    print(f"making {venv} from {requirements}{system}, once", file=sys.stderr, flush=True)
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--clear"] + (["--system-site-packages"] if system_site_packages else [])
                   + [venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-input", "--disable-pip-version-check", "--no-deps",
                    "--require-hashes", "--only-binary=:all:"] + (["--find-links", find_links] if find_links else [])
                   + ["-r", requirements], check=True)
    with open(marker, "w") as handle:
        handle.write(wanted)
    return python


def inside(venv):
    """Whether this interpreter is the venv's."""
    return os.path.realpath(sys.prefix) == os.path.realpath(venv)
