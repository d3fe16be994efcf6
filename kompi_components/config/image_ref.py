"""Image references as container runtimes parse them (the distribution reference grammar).

A reference the kubelet cannot parse fails only once the pods exist (InvalidImageName), after the
Namespace, Secret and Service were created; kompi checks the same grammar before anything is created.
"""

from __future__ import annotations

import re

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_PATH = re.compile(rf"^{_COMPONENT}(?:/{_COMPONENT})*$")
_HOST = re.compile(
    r"^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
    r"|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$"
)
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$")
_SHA256 = re.compile(r"^sha256:[0-9a-f]{64}$")
NAME_MAX = 255

REPOSITORY_EXAMPLE = "registry.example.com/ml/kompi"
TAG_EXPECTED = "an image tag (letters, digits, '_', '.', '-'; at most 128), optionally followed by @sha256:<64 hex>"


def _domain_and_path(name: str) -> tuple[str | None, str]:
    first, _, rest = name.partition("/")
    # As the runtimes decide: the first part is a registry host if it looks like one.
    if rest and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        return first, rest
    return None, name


def _name_problem(name: str, what: str) -> str | None:
    domain, path = _domain_and_path(name)
    if domain is not None and domain != domain.lower() and not any(mark in domain for mark in ".:"):
        # Runtimes would take "MyOrg" in "MyOrg/kompi" for a registry host; it is a mistyped path.
        path = name
    elif domain is not None and not _HOST.match(domain):
        return f"{what} such as {REPOSITORY_EXAMPLE} (bad registry host {domain!r})"
    if path != path.lower() and _PATH.match(path.lower()):
        return f"{what} in lower case (only the registry host may have capitals), such as {REPOSITORY_EXAMPLE}"
    if not _PATH.match(path) or len(name) > NAME_MAX:
        return f"{what} such as {REPOSITORY_EXAMPLE} (lower case, no spaces, at most {NAME_MAX} characters)"
    return None


def repository_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a repository without tag or digest (None: nothing)."""
    if "@" in name:
        return "a repository without a digest (write it in kompi:imageTag as TAG@sha256:...)"
    path = _domain_and_path(name)[1]
    if ":" in path:
        return f"a repository without a tag (put {path.rsplit(':', 1)[1]!r} in kompi:imageTag)"
    return _name_problem(name, "an image repository")


def digest_problem(digest: str) -> str | None:
    if not _DIGEST.match(digest) or (digest.startswith("sha256:") and not _SHA256.match(digest)):
        return "a digest such as sha256:<64 lower-case hex digits>"
    return None


def tag_problem(tag: str) -> str | None:
    """What is wrong with ``tag`` as kompi:imageTag: TAG or TAG@DIGEST (None: nothing)."""
    name, at, digest = tag.partition("@")
    if not _TAG.match(name):
        return TAG_EXPECTED
    if at:
        return digest_problem(digest)
    return None


def reference_problem(reference: str) -> str | None:
    """What is wrong with a whole reference, REPOSITORY[:TAG][@DIGEST] (None: nothing)."""
    name, at, digest = reference.partition("@")
    if at and (problem := digest_problem(digest)):
        return problem
    domain, path = _domain_and_path(name)
    if ":" in path:
        path, _, tag = path.rpartition(":")
        if not _TAG.match(tag):
            return f"an image reference such as {REPOSITORY_EXAMPLE}:TAG (bad tag {tag!r})"
        name = f"{domain}/{path}" if domain is not None else path
    return _name_problem(name, "an image reference")
