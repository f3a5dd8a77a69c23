#!/usr/bin/env python3
"""Checks the deployment files against the facewire binary, without running a container engine or a cluster.

  python3 deploy/check.py --binary .build/debug/facewire [--deploy deploy]

* every YAML file (compose, Kubernetes) parses;
* every container, compose service and systemd unit names a role, and every flag it passes (arguments, and
  FACEWIRE_* variables, which become flags) is an option of that role in `facewire --role ROLE --help`;
* every port a manifest declares is a port the node uses: given in its arguments or a default its --help shows;
* every Kubernetes probe points at a declared port, and the node serves metrics there (--metrics-port);
* the Containerfile builds with a Swift new enough for the package and installs, at run time, every shared
  library the binary links from Debian (OpenCV modules, libzmq, libturbojpeg, libv4l2, libmosquitto).

Prints one line per problem and exits 1 if there is any; prints what it checked and exits 0 otherwise.
"""

import argparse
import glob
import os
import re
import subprocess
import sys

import yaml

problems = []
checked = []


def problem(where, text):
    problems.append(f"{where}: {text}")


_help = {}


def role_help(binary, role):
    if role not in _help:
        run = subprocess.run([binary, "--role", role, "--help"], capture_output=True, text=True, env=clean_env())
        _help[role] = run.stdout + run.stderr if run.returncode == 0 else None
    return _help[role]


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("FACEWIRE_")}


def flags_of(help_text):
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text))


def check_node(where, binary, args, env):
    """args: the argument list (without the binary); env: {name: value}."""
    role = None
    if "--role" in args:
        index = args.index("--role")
        role = args[index + 1] if index + 1 < len(args) else None
    role = role or env.get("FACEWIRE_ROLE")
    if role is None:
        problem(where, "no --role and no FACEWIRE_ROLE")
        return None
    text = role_help(binary, role)
    if text is None:
        problem(where, f"role '{role}' is unknown to the binary")
        return None
    known = flags_of(text)
    for token in args:
        if token.startswith("--") and token != "--role":
            name = token.split("=", 1)[0]
            if name not in known:
                problem(where, f"{name} is not an option of --role {role}")
    for name in env:
        if name.startswith("FACEWIRE_") and name not in ("FACEWIRE_ROLE", "FACEWIRE_MODEL_DIR"):
            flag = "--" + name[len("FACEWIRE_"):].lower().replace("_", "-")
            if flag not in known:
                problem(where, f"{name} ({flag}) is not an option of --role {role}")
    checked.append(f"{where}: --role {role}")
    return role, text


def port_is_used(port, args, help_text):
    port = str(port)
    return any(re.search(rf"(^|[^0-9]){port}([^0-9]|$)", str(a)) for a in args) or re.search(
        rf":{port}\b", help_text) is not None


def check_kubernetes(path, binary):
    for document in yaml.safe_load_all(open(path)):
        if not document or document.get("kind") not in ("Deployment", "StatefulSet"):
            continue
        name = document["metadata"]["name"]
        for container in document["spec"]["template"]["spec"]["containers"]:
            where = f"{os.path.basename(path)} {name}/{container['name']}"
            if not pinned_or_facewire(where, str(container.get("image", "facewire"))):
                continue
            args = [str(a) for a in container.get("args", [])]
            env = {e["name"]: e.get("value", "") for e in container.get("env", [])}
            result = check_node(where, binary, args, env)
            if result is None:
                continue
            _, text = result
            ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
            for port_name, port in ports.items():
                if not port_is_used(port, args, text):
                    problem(where, f"port {port} ({port_name}) is neither in its arguments nor a default of its role")
            for probe_name in ("readinessProbe", "livenessProbe"):
                probe = container.get(probe_name)
                if not probe:
                    continue
                target = probe.get("httpGet", {}).get("port")
                port = ports.get(target, target)
                if port not in ports.values():
                    problem(where, f"{probe_name} targets port {target}, which the container does not declare")
                elif "--metrics-port" not in args or str(port) != args[args.index("--metrics-port") + 1]:
                    problem(where, f"{probe_name} targets {port}, but the node serves /healthz only on --metrics-port")
                if probe.get("httpGet", {}).get("path") != "/healthz":
                    problem(where, f"{probe_name} must probe /healthz")


def pinned_or_facewire(where, image):
    """True for the facewire image (its node is checked); for another program's (etcd in a failover group) only that
    it is pinned to a version."""
    # Compose's `${VARIABLE:-default}`: what runs unless the variable is set.
    image = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", image)
    if image.split(":")[0] == "facewire":
        return True
    if ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest"):
        problem(where, f"image {image} is not pinned to a version")
    else:
        checked.append(f"{where}: {image}")
    return False


def check_compose(path, binary):
    document = yaml.safe_load(open(path))
    for name, service in document.get("services", {}).items():
        where = f"{os.path.basename(path)} {name}"
        if not pinned_or_facewire(where, str(service.get("image", "facewire"))):
            continue
        command = service.get("command", [])
        args = command.split() if isinstance(command, str) else [str(a) for a in command]
        env = service.get("environment", {})
        if isinstance(env, list):
            env = dict(item.split("=", 1) for item in env)
        result = check_node(where, binary, args, {k: str(v) for k, v in env.items()})
        if result is None:
            continue
        _, text = result
        for mapping in service.get("ports", []):
            port = str(mapping).split(":")[-1]
            if not port_is_used(port, args + list(map(str, env.values())), text):
                problem(where, f"port {port} is neither in its arguments nor a default of its role")


def check_systemd(path, binary):
    where = os.path.basename(path)
    args = None
    env = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("ExecStart="):
            tokens = line[len("ExecStart="):].split()
            if not tokens[0].endswith("/facewire"):
                problem(where, f"ExecStart runs {tokens[0]}, not facewire")
            args = tokens[1:]
        elif line.startswith("Environment="):
            name, _, value = line[len("Environment="):].partition("=")
            env[name] = value
    if args is None:
        problem(where, "no ExecStart")
        return
    check_node(where, binary, args, env)
    text = open(path).read()
    for setting in ("NoNewPrivileges=yes", "ProtectSystem=strict", "User=facewire"):
        if setting not in text:
            problem(where, f"missing {setting}")


def check_containerfile(path, package_swift):
    text = open(path).read()
    where = os.path.basename(path)
    match = re.search(r"^FROM swift:(\d+)\.(\d+)", text, re.M)
    if not match:
        problem(where, "no FROM swift:X.Y build stage")
    elif (int(match.group(1)), int(match.group(2))) < (6, 2):
        problem(where, f"swift:{match.group(1)}.{match.group(2)} is older than 6.2, which swift-prometheus needs")
    stages = re.split(r"^FROM ", text, flags=re.M)
    # The runtime's libraries and user are in the stage both final stages start from (`runtime-base`: the binary
    # built in the image, or prebuilt on the host); without one, the last stage.
    named = {m.group(1): stage for stage in stages[1:] for m in [re.match(r"\S+\s+AS\s+(\S+)", stage)] if m}
    runtime = named.get("runtime-base") or (stages[-1] if len(stages) > 2 else "")
    if "runtime-base" in named:
        for final in ("runtime", "prebuilt"):
            if not (named.get(final) or "").startswith("runtime-base "):
                problem(where, f"the {final} stage does not start FROM runtime-base")
    modules = re.findall(r'"opencv_([a-z]+)"', open(package_swift).read())
    if not modules:
        problem(where, "cannot read the OpenCV modules from Package.swift")
    for module in modules:
        if f"libopencv-{module}4" not in runtime:
            problem(where, f"the runtime stage does not install libopencv-{module} (linked by Package.swift)")
    for library in ("libzmq5", "libturbojpeg0", "libv4l-0", "libmosquitto1"):
        if library not in runtime:
            problem(where, f"the runtime stage does not install {library}")
    if "libv4l-dev" not in stages[1] if len(stages) > 1 else True:
        problem(where, "the build stage does not install libv4l-dev")
    if not re.search(r"^USER (?!root|0\b)", runtime, re.M):
        problem(where, "the runtime stage does not switch to a non-root user")
    checked.append(f"{where}: swift {match.group(1)}.{match.group(2) if match else '?'}, {len(modules)} OpenCV modules")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--deploy", default=os.path.dirname(os.path.abspath(__file__)))
    options = parser.parse_args()
    deploy = options.deploy
    for path in sorted(glob.glob(os.path.join(deploy, "kubernetes", "*.yaml")) + glob.glob(os.path.join(deploy, "kubernetes", "*", "*.yaml"))):
        check_kubernetes(path, options.binary)
    for path in sorted(glob.glob(os.path.join(deploy, "*.yaml"))):
        check_compose(path, options.binary)
    for path in sorted(glob.glob(os.path.join(deploy, "systemd", "*.service"))):
        check_systemd(path, options.binary)
    containerfile = os.path.join(deploy, "Containerfile")
    if os.path.exists(containerfile):
        check_containerfile(containerfile, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Package.swift"))
    for line in checked:
        print("checked", line)
    for line in problems:
        print("PROBLEM", line)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
