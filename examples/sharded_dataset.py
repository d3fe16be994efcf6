"""A small sharded dataset: written by kompi's data-preparation Job, checked by an MPI job.

    python3 sharded_dataset.py prepare --out /datasets --shards 3 --values 100000 --seed 7
    mpiexec python3 sharded_dataset.py check --data /datasets

``prepare`` writes ``shard-NNNNN.bin`` files of random little-endian int64 values and, last, a
``manifest.json`` with each shard's sha256, count and sum (its presence marks a complete dataset).
``check`` is an MPI program: every rank reads its own shards (shard i goes to rank i % size),
verifies their checksums and sums them; an allreduce compares the totals with the manifest. Each rank
prints one JSON line; the exit status is non-zero on every rank when anything does not match.

Standard library only (plus mpi4py for ``check``), so that it runs in kompi's images as they are.
A stack that uses it (the script reaches the pods through kompi:appCode or the image)::

    kompi:dataVolumes:
      - {name: train, size: 10Gi, storageClassName: nfs, mountPath: /datasets}
    kompi:dataPreparation:
      command: [python3, /repo/examples/sharded_dataset.py, prepare, --out, /datasets, --shards, "3"]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import socket
import sys
from array import array
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
ITEM = "q"  # int64
VALUE_BITS = 32


def shard_name(index: int) -> str:
    return f"shard-{index:05d}.bin"


def shard_values(seed: int, index: int, count: int) -> array[int]:
    """The same values for the same seed and shard, on any machine."""
    rng = random.Random(f"{seed}/{index}")
    offset = 2 ** (VALUE_BITS - 1)
    values = array(ITEM, (rng.getrandbits(VALUE_BITS) - offset for _ in range(count)))
    if sys.byteorder != "little":
        values.byteswap()
    return values


def read_values(path: Path) -> array[int]:
    values = array(ITEM)
    values.frombytes(path.read_bytes())
    if sys.byteorder != "little":
        values.byteswap()
    return values


def write_atomically(path: Path, data: bytes) -> None:
    """A reader never sees half a file: write a temporary file, then rename it into place."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def prepare(out: Path, shards: int, values: int, seed: int) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    # The old manifest goes first: an interrupted run leaves no manifest, never a stale one.
    (out / MANIFEST).unlink(missing_ok=True)
    files, total = [], 0
    for index in range(shards):
        data = shard_values(seed, index, values)
        raw = data.tobytes()
        write_atomically(out / shard_name(index), raw)
        digest, shard_sum = hashlib.sha256(raw).hexdigest(), sum(data)
        files.append({"name": shard_name(index), "sha256": digest, "count": values, "sum": shard_sum})
        total += shard_sum
    # Shards of an earlier, larger run are not part of this dataset.
    for stale in set(out.glob("shard-*.bin")) - {out / entry["name"] for entry in files}:
        stale.unlink()
    manifest = {
        "shards": shards,
        "valuesPerShard": values,
        "seed": seed,
        "total": total,
        "files": files,
    }
    write_atomically(out / MANIFEST, json.dumps(manifest, indent=1).encode())
    return manifest


def check_shards(data: Path, manifest: dict[str, Any], rank: int, size: int) -> dict[str, Any]:
    """This rank's part: its shards' checksums, count and sum."""
    mine = [entry for index, entry in enumerate(manifest["files"]) if index % size == rank]
    bad, count, total = [], 0, 0
    for entry in mine:
        raw = (data / entry["name"]).read_bytes()
        if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            bad.append(entry["name"])
        values = read_values(data / entry["name"])
        count += len(values)
        total += sum(values)
    return {"shards": [entry["name"] for entry in mine], "bad": bad, "count": count, "sum": total}


def check(data: Path) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    manifest = json.loads((data / MANIFEST).read_text())
    part = check_shards(data, manifest, rank, size)
    bad = comm.allreduce(len(part["bad"]), op=MPI.SUM)
    count = comm.allreduce(part["count"], op=MPI.SUM)
    total = comm.allreduce(part["sum"], op=MPI.SUM)
    expected_count = manifest["shards"] * manifest["valuesPerShard"]
    ok = bad == 0 and count == expected_count and total == manifest["total"]
    report = {"rank": rank, "size": size, "hostname": socket.gethostname(), **part}
    report |= {"badShards": bad, "totalCount": count, "total": total, "expectedTotal": manifest["total"], "ok": ok}
    print(json.dumps(report), flush=True)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("prepare", help="write the shards and the manifest")
    make.add_argument("--out", type=Path, required=True)
    make.add_argument("--shards", type=int, default=int(os.environ.get("SHARDS", "3")))
    make.add_argument("--values", type=int, default=int(os.environ.get("VALUES", "100000")))
    make.add_argument("--seed", type=int, default=int(os.environ.get("SEED", "1")))
    verify = commands.add_parser("check", help="MPI: every rank checks its shards; totals by allreduce")
    verify.add_argument("--data", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "prepare":
        manifest = prepare(args.out, args.shards, args.values, args.seed)
        print(json.dumps({k: manifest[k] for k in ("shards", "valuesPerShard", "seed", "total")}), flush=True)
        return 0
    return check(args.data)


if __name__ == "__main__":
    sys.exit(main())
