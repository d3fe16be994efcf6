"""Prepares the training data on a volume, as a kompi:dataPreparation Job does before the workers start:
scikit-learn's handwritten digits as one NumPy file that train.py --data reads.

    python3 /opt/kompi/training/prepare.py --out /data
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

DATASET = "digits.npz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="directory to write digits.npz to")
    args = parser.parse_args(argv)
    digits = load_digits()
    args.out.mkdir(parents=True, exist_ok=True)
    temporary = args.out / f".{DATASET}.tmp"
    with temporary.open("wb") as file:  # a file object: np.savez would add .npz to a temporary name
        np.savez(file, images=(digits.images / 16.0).astype(np.float32), labels=digits.target.astype(np.int64))
    os.replace(temporary, args.out / DATASET)  # a Job retried after a crash never leaves half a file
    print(f"wrote {len(digits.target)} images to {args.out / DATASET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
