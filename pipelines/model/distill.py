"""Distils all-MiniLM-L6-v2 into a static token table (model2vec-style) for tg-embed.

Every WordPiece token is run through the full model once, as `[CLS] token [SEP]`, and
mean-pooled; the vocabulary's mean vector is removed (it is shared by every token and would make
all texts look alike) and each vector is scaled by log(1 + token id), a Zipf weight (BERT's
vocabulary is roughly in frequency order, so frequent tokens weigh less). A text's embedding is
then the normalised sum of its tokens' rows.

usage: distill.py MODEL_DIR OUT_FILE

Output format (little-endian): b"TGSTATIC", u32 version=1, u32 vocab, u32 dim, then vocab
lines (UTF-8, one token per line, the block's byte length first as u32), then vocab*dim f32.
"""

import struct
import sys
import time

import numpy as np

from bert import Bert

MAGIC = b"TGSTATIC"


def main():
    model_dir, out = sys.argv[1], sys.argv[2]
    bert = Bert(model_dir)
    vocab = [line.rstrip("\n") for line in open(f"{model_dir}/vocab.txt", encoding="utf-8")]
    n = len(vocab)
    started = time.time()
    table = np.zeros((n, bert.hidden), dtype=np.float32)
    batch = 2048
    for start in range(0, n, batch):
        ids = np.arange(start, min(n, start + batch))
        seq = np.stack([np.full_like(ids, 101), ids, np.full_like(ids, 102)], axis=1)
        hidden = bert.forward(seq, np.ones_like(seq))
        table[start:start + len(ids)] = hidden.mean(axis=1)
    table -= table.mean(axis=0, keepdims=True)
    table *= np.log1p(np.arange(n, dtype=np.float32))[:, None]
    words = "\n".join(vocab).encode("utf-8")
    with open(out + ".tmp", "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<III", 1, n, bert.hidden))
        f.write(struct.pack("<I", len(words)))
        f.write(words)
        f.write(table.astype("<f4").tobytes())
    import os
    os.replace(out + ".tmp", out)
    print(f"distil: {n} tokens x {bert.hidden} in {time.time() - started:.1f}s -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
