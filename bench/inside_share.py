"""Recompute the board check ``vision.count.inside_share`` of a full-pipeline dump with
another counter network, from the corners the board finder found (same finder, new net).

    python bench/inside_share.py DUMP.jsonl DATASET_DIR --model M.onnx --out NEW.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.config import CountConfig
from vision.count import densities, inside_share
from vision.locate import outline_from_corners


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump", type=Path)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    cfg = replace(CountConfig(), model=str(args.model))
    with open(args.out, "w", encoding="utf-8") as fh:
        for line in args.dump.read_text("utf-8").splitlines():
            row = json.loads(line)
            if row.get("pred_corners") is not None:
                image = cv2.imread(str(args.dataset / row["image"]))
                if image is None:
                    print(f"cannot read {args.dataset / row['image']}", file=sys.stderr)
                    return 2
                outline = outline_from_corners(np.array(row["pred_corners"], np.float64))
                dens, labels, _ = densities(np.asarray(image, np.uint8), outline, cfg)
                row["inside_share"] = round(inside_share(dens, labels), 4)
            fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
