"""Re-tag a released Triton wheel as a nightly build: a new version in METADATA, the
dist-info folder renamed, RECORD rewritten to match, the file named after the new version.

The package's files are copied as they are stored (their compressed bytes, no
recompression), so a 200 MB wheel is re-tagged in about the time it takes to copy it.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import re
import struct
import zipfile
from pathlib import Path

_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def _copy_stored(source, info: zipfile.ZipInfo, out: zipfile.ZipFile) -> None:
    """``info``'s local header and compressed bytes from ``source`` into ``out`` as they are."""
    source.seek(info.header_offset)
    header = source.read(_LOCAL_HEADER.size)
    fields = _LOCAL_HEADER.unpack(header)
    name_length, extra_length = fields[-2], fields[-1]
    rest = source.read(name_length + extra_length + info.compress_size)
    moved = copy.copy(info)
    moved.header_offset = out.fp.tell()
    out.fp.write(header + rest)
    out.filelist.append(moved)
    out.NameToInfo[moved.filename] = moved
    out.start_dir = out.fp.tell()


def retag(wheel: Path, version: str, folder: Path) -> Path:
    """A copy of ``wheel`` under ``folder`` that declares ``version``."""
    name, old_version, tags = re.fullmatch(r"([^-]+)-([^-]+)-(.+)\.whl", wheel.name).groups()
    old_info, new_info = f"{name}-{old_version}.dist-info/", f"{name}-{version}.dist-info/"
    target = folder / f"{name}-{version}-{tags}.whl"
    with zipfile.ZipFile(wheel) as src, open(wheel, "rb") as raw:
        metadata = src.read(old_info + "METADATA").decode()
        metadata = re.sub(r"^Version: .*$", f"Version: {version}", metadata, count=1, flags=re.M)
        rewritten = {new_info + "METADATA": metadata.encode()}
        for info in src.infolist():
            if info.filename.startswith(old_info) and not info.filename.endswith(
                ("/METADATA", "/RECORD")
            ):
                rewritten[new_info + info.filename[len(old_info) :]] = src.read(info)
        record = []
        for line in src.read(old_info + "RECORD").decode().splitlines():
            path = line.split(",", 1)[0]
            if not path.startswith(old_info):
                record.append(line)
        for path, data in rewritten.items():
            record.append(f"{path},{_record_hash(data)},{len(data)}")
        record.append(f"{new_info}RECORD,,")
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
            for info in src.infolist():
                if not info.filename.startswith(old_info):
                    _copy_stored(raw, info, out)
            for path, data in rewritten.items():
                out.writestr(path, data)
            out.writestr(new_info + "RECORD", "\n".join(record) + "\n")
    return target
