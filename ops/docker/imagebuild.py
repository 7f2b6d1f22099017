"""The project's Docker images, built without a registry, each tagged by a hash of what it is made of.

There is no image registry to pull from here, so every image starts from a
Debian base made with debootstrap (``--variant=minbase``, imported with
``docker import``); packages come from the Debian mirror, Python wheels from
PyPI (downloaded on the host, so the build needs no index) and Kafka's jars
from Maven Central (``ops/kafka/fetch``):

- ``draplane-base``: Debian bookworm minbase, without apt lists, docs or locales;
- ``draplane``: Python 3.11 and the project in a venv (``ops/Dockerfile``);
- ``draplane-kafka``: a JRE and the broker jars (``ops/docker/kafka.Dockerfile``).

Each is tagged ``<name>:<hash of its inputs>`` and ``<name>:local`` (what
docker-compose.yml and the testcontainers backend use). When the hash tag
exists, the image is reused and nothing is built; after a build, older hash
tags of that name are removed. Only the standard library is used.

    ops/docker/images            build what changed; print one line per image
    ops/docker/images --print    the tags the inputs give now, building nothing
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "docker"
WHEELS = CACHE / "wheels"
KAFKA_VERSION = os.environ.get("KAFKA_VERSION", "4.1.1")
KAFKA_LIBS = REPO / ".cache" / "kafka" / KAFKA_VERSION / "libs"
MIRROR = os.environ.get("DRAPLANE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
SECURITY_MIRROR = os.environ.get("DRAPLANE_DEBIAN_SECURITY_MIRROR", "http://deb.debian.org/debian-security")
SUITE = "bookworm"
# pip runs from its own wheel in the build; setuptools builds the project there.
BUILD_WHEELS = ("pip==25.3", "setuptools==80.9.0")
LOCAL = "local"
PREFIX = "ops/docker/images: "

# Written into the base before it is imported: the mirror, and dpkg/apt settings
# that keep later layers small (no docs, man pages or locales; no .deb cache).
BASE_FILES = {
    "etc/apt/sources.list": (
        f"deb {MIRROR} {SUITE} main\n"
        f"deb {MIRROR} {SUITE}-updates main\n"
        f"deb {SECURITY_MIRROR} {SUITE}-security main\n"
    ),
    "etc/dpkg/dpkg.cfg.d/01-draplane-slim": (
        "path-exclude /usr/share/doc/*\n"
        "path-include /usr/share/doc/*/copyright\n"
        "path-exclude /usr/share/man/*\n"
        "path-exclude /usr/share/info/*\n"
        "path-exclude /usr/share/locale/*\n"
        "path-include /usr/share/locale/locale.alias\n"
    ),
    "etc/apt/apt.conf.d/01-draplane-slim": (
        'APT::Install-Recommends "false";\n'
        'APT::Install-Suggests "false";\n'
        'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\n'
        'Acquire::Languages "none";\n'
    ),
}
# What the base drops after debootstrap: package lists and caches, docs, locales.
BASE_PRUNE = (
    "var/lib/apt/lists",
    "var/cache/apt",
    "var/cache/debconf/*-old",
    "var/log",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
)

# Made again after pruning: apt's, and man1, where the JRE's update-alternatives links its pages.
BASE_DIRS = ("var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/log", "usr/share/man/man1")


def say(message: str) -> None:
    print(PREFIX + message, file=sys.stderr, flush=True)


class BuildError(Exception):
    """An image could not be built; the message says which and why."""


@dataclass(frozen=True)
class Image:
    name: str
    key: str

    @property
    def tag(self) -> str:
        return f"{self.name}:{self.key}"

    @property
    def local(self) -> str:
        return f"{self.name}:{LOCAL}"


def run(*argv: str, stdin: int | None = None, log: Path | None = None, **kwargs: object) -> None:
    """Run a command; on failure raise BuildError with the tail of its output."""
    with tempfile.TemporaryFile() as out:
        result = subprocess.run(argv, stdin=stdin, stdout=out, stderr=subprocess.STDOUT, check=False, **kwargs)  # type: ignore[call-overload]
        out.seek(0)
        text = out.read().decode(errors="replace")
    if log is not None:
        log.write_text(text)
    if result.returncode != 0:
        tail = "\n".join(text.splitlines()[-25:])
        raise BuildError(f"{' '.join(argv[:3])} ... failed (exit {result.returncode}):\n{tail}")


def exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False).returncode == 0


def digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()[:16]


def tree(root: Path, *, under: str = "") -> Iterator[tuple[str, Path]]:
    """(path in the context, file) for every file under ``root``, sorted, without bytecode."""
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield f"{under}{path.relative_to(root)}", path


def context_key(files: Iterable[tuple[str, Path]], *extra: str) -> str:
    parts: list[bytes] = [e.encode() for e in extra]
    for name, path in files:
        mode = "x" if os.access(path, os.X_OK) else "-"
        parts += [f"{mode} {name}".encode(), path.read_bytes()]
    return digest(parts)


def stage(files: Iterable[tuple[str, Path]], into: Path) -> None:
    for name, path in files:
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


# --- the base ----------------------------------------------------------------


def base_image() -> Image:
    recipe = {"suite": SUITE, "variant": "minbase", "files": BASE_FILES, "prune": BASE_PRUNE, "dirs": BASE_DIRS}
    return Image("draplane-base", digest([json.dumps(recipe, sort_keys=True).encode()]))


def build_base(image: Image) -> None:
    if shutil.which("debootstrap") is None:
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            raise BuildError("the base needs debootstrap (apt-get install debootstrap)")
        say("installing debootstrap from Debian")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = ("apt-get", "install", "-y", "--no-install-recommends", "debootstrap")
        try:
            run(*install, env=env)
        except BuildError:  # no package lists yet on a fresh machine
            run("apt-get", "update", env=env)
            run(*install, env=env)
    scratch = tempfile.mkdtemp(prefix="draplane-base.", dir="/var/tmp")
    try:
        _import_base(image, Path(scratch))
    finally:
        # debootstrap mounts /proc (and more) in the tree; never delete through a mount.
        unmount_under(Path(scratch))
        shutil.rmtree(scratch, ignore_errors=True)


def unmount_under(root: Path) -> None:
    with open("/proc/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    for point in sorted((p for p in points if p.startswith(f"{root}/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False)


def _import_base(image: Image, scratch: Path) -> None:
    rootfs = scratch / "rootfs"
    run("debootstrap", "--variant=minbase", SUITE, str(rootfs), MIRROR, log=scratch / "debootstrap.log")
    unmount_under(scratch)
    for pattern in BASE_PRUNE:
        for path in rootfs.glob(pattern):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    for directory in BASE_DIRS:
        (rootfs / directory).mkdir(parents=True, exist_ok=True)
    for name, text in BASE_FILES.items():
        (rootfs / name).parent.mkdir(parents=True, exist_ok=True)
        (rootfs / name).write_text(text)
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
    try:
        run("docker", "import",
            "--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "--change", "ENV LANG=C.UTF-8",
            "--change", 'CMD ["bash"]',
            "-", image.tag, stdin=tar.stdout.fileno() if tar.stdout else None)
    finally:
        if tar.stdout:
            tar.stdout.close()
        tar.wait()
    if tar.returncode != 0:
        raise BuildError(f"tar of the debootstrap tree failed (exit {tar.returncode})")


# --- draplane ----------------------------------------------------------------


def wheels() -> Path:
    """The locked wheels (and pip, setuptools) in .cache/docker/wheels, downloaded when the lock changed."""
    lock = (REPO / "requirements.lock").read_bytes()
    stamp = WHEELS / ".lock-digest"
    want = digest([lock, *(w.encode() for w in BUILD_WHEELS)])
    if stamp.exists() and stamp.read_text() == want:
        return WHEELS
    say("downloading the locked wheels into .cache/docker/wheels")
    shutil.rmtree(WHEELS, ignore_errors=True)
    WHEELS.mkdir(parents=True)
    pip = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet", "--no-deps",
           "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "-d", str(WHEELS)]
    run(*pip, "-r", str(REPO / "requirements.lock"))
    run(*pip, *BUILD_WHEELS)
    stamp.write_text(want)
    return WHEELS


def draplane_files() -> list[tuple[str, Path]]:
    files = [("Dockerfile", REPO / "ops" / "Dockerfile")]
    files += [(name, REPO / name) for name in ("requirements.lock", "pyproject.toml", "README.md")]
    files += list(tree(REPO / "services", under="services/"))
    files += list(tree(REPO / "topics", under="topics/"))
    files += [(f".cache/docker/wheels/{p.name}", p) for p in sorted(wheels().glob("*.whl"))]
    return files


def kafka_files() -> list[tuple[str, Path]]:
    if not (KAFKA_LIBS / ".complete").exists():
        run(str(REPO / "ops" / "kafka" / "fetch"))
    files = [("Dockerfile", REPO / "ops" / "docker" / "kafka.Dockerfile"),
             ("kafka-entrypoint", REPO / "ops" / "docker" / "kafka-entrypoint")]
    files += [(f"libs/{p.name}", p) for p in sorted(KAFKA_LIBS.glob("*.jar"))]
    return files


def build_from(image: Image, files: list[tuple[str, Path]], *, base: Image) -> None:
    with tempfile.TemporaryDirectory(prefix=f"{image.name}.", dir="/var/tmp") as scratch:
        context = Path(scratch) / "context"
        stage(files, context)
        # --network host: apt reaches the mirror as the host does, whatever the bridge's state.
        run("docker", "build", "--force-rm", "--network", "host", "--build-arg", f"BASE={base.tag}",
            "--label", f"org.draplane.image={image.name}", "-t", image.tag, str(context),
            env={**os.environ, "DOCKER_BUILDKIT": "0"}, log=Path(scratch) / "build.log")


# --- all of it ---------------------------------------------------------------


def tag_local(image: Image) -> None:
    run("docker", "tag", image.tag, image.local)
    listed = subprocess.run(["docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}", image.name],
                            capture_output=True, text=True, check=False).stdout.split()
    stale = [t for t in listed if t not in (image.tag, image.local)]
    if stale:
        subprocess.run(["docker", "rmi", *stale], capture_output=True, check=False)


def ensure(image: Image, build: Callable[[], None]) -> float:
    """Build ``image`` unless its hash tag exists; returns the seconds spent."""
    started = time.monotonic()
    if exists(image.tag):
        tag_local(image)
        say(f"{image.tag} is up to date (also {image.local})")
        return 0.0
    say(f"building {image.tag} ...")
    build()
    tag_local(image)
    spent = time.monotonic() - started
    say(f"built {image.tag} in {spent:.0f}s (also {image.local}, {size(image.tag)})")
    return spent


def size(tag: str) -> str:
    out = subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", tag],
                         capture_output=True, text=True, check=False).stdout.strip()
    return f"{int(out) / 1e6:.0f} MB" if out.isdigit() else "size unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ops/docker/images", description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the tags the inputs give now; build nothing")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        base = base_image()
        draplane = draplane_files()
        kafka = kafka_files()
        app = Image("draplane", context_key(draplane, base.tag))
        broker = Image("draplane-kafka", context_key(kafka, base.tag))
        if args.print:
            for image in (base, app, broker):
                print(image.tag)
            return 0
        if subprocess.run(["docker", "version"], capture_output=True, check=False).returncode != 0:
            raise BuildError("no Docker engine answers (ops/docker/engine starts one)")
        ensure(base, lambda: build_base(base))
        with ThreadPoolExecutor(max_workers=2) as pool:  # both wait mostly on the mirror
            jobs = [pool.submit(ensure, app, lambda: build_from(app, draplane, base=base)),
                    pool.submit(ensure, broker, lambda: build_from(broker, kafka, base=base))]
            for job in jobs:
                job.result()
    except BuildError as exc:
        say(str(exc))
        return 1
    say(f"images ready in {time.monotonic() - started:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
