"""A numpy forward pass of a BERT encoder (all-MiniLM-L6-v2) read straight from its safetensors
file, and its uncased WordPiece tokenizer. Used once at set-up time to distil the static table
tg-embed runs on, and by the retrieval benchmark as the full-model reference. No torch needed."""

import json
import struct
import unicodedata

import numpy as np

DTYPES = {"F32": np.float32, "I64": np.int64, "F16": np.float16}


def load_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        base = 8 + size
        tensors = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            start, end = info["data_offsets"]
            f.seek(base + start)
            raw = f.read(end - start)
            tensors[name] = np.frombuffer(raw, dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


class Bert:
    def __init__(self, model_dir):
        self.t = load_safetensors(f"{model_dir}/model.safetensors")
        config = json.load(open(f"{model_dir}/config.json"))
        self.layers = config["num_hidden_layers"]
        self.heads = config["num_attention_heads"]
        self.hidden = config["hidden_size"]

    def w(self, name):
        return self.t[name].astype(np.float32)

    def forward(self, ids, mask):
        """ids, mask: int arrays [batch, seq]; returns the last hidden states [batch, seq, hidden]."""
        batch, seq = ids.shape
        x = self.w("embeddings.word_embeddings.weight")[ids]
        x = x + self.w("embeddings.position_embeddings.weight")[:seq][None]
        x = x + self.w("embeddings.token_type_embeddings.weight")[0][None, None]
        x = layer_norm(x, self.w("embeddings.LayerNorm.weight"), self.w("embeddings.LayerNorm.bias"))
        head = self.hidden // self.heads
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            lin = lambda v, n: v @ self.w(p + n + ".weight").T + self.w(p + n + ".bias")
            q = lin(x, "attention.self.query").reshape(batch, seq, self.heads, head).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(batch, seq, self.heads, head).transpose(0, 2, 3, 1)
            v = lin(x, "attention.self.value").reshape(batch, seq, self.heads, head).transpose(0, 2, 1, 3)
            scores = q @ k / np.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, seq, self.hidden)
            x = layer_norm(x + lin(ctx, "attention.output.dense"),
                           self.w(p + "attention.output.LayerNorm.weight"), self.w(p + "attention.output.LayerNorm.bias"))
            h = lin(x, "intermediate.dense")
            # gelu, tanh form (within 1e-3 of the erf form; numpy has no erf)
            h = 0.5 * h * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (h + 0.044715 * h ** 3)))
            x = layer_norm(x + lin(h, "output.dense"),
                           self.w(p + "output.LayerNorm.weight"), self.w(p + "output.LayerNorm.bias"))
        return x


class WordPiece:
    """BERT's uncased tokenizer: clean, lower-case, strip accents, split on spaces and
    punctuation, then greedy longest-match WordPiece. tg-embed's Rust tokenizer does the same."""

    def __init__(self, vocab_path):
        self.vocab = {}
        for i, line in enumerate(open(vocab_path, encoding="utf-8")):
            self.vocab[line.rstrip("\n")] = i
        self.unk = self.vocab["[UNK]"]

    def words(self, text):
        text = unicodedata.normalize("NFD", text.lower())
        out, cur = [], []
        for ch in text:
            if unicodedata.category(ch) == "Mn":
                continue
            if ch.isspace() or unicodedata.category(ch).startswith("C"):
                if cur:
                    out.append("".join(cur))
                    cur = []
            elif is_punct(ch):
                if cur:
                    out.append("".join(cur))
                    cur = []
                out.append(ch)
            else:
                cur.append(ch)
        if cur:
            out.append("".join(cur))
        return out

    def ids(self, text, limit=128):
        ids = []
        for word in self.words(text):
            if len(word) > 100:
                ids.append(self.unk)
                continue
            start, pieces = 0, []
            while start < len(word):
                end = len(word)
                found = None
                while start < end:
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    if piece in self.vocab:
                        found = self.vocab[piece]
                        break
                    end -= 1
                if found is None:
                    pieces = [self.unk]
                    break
                pieces.append(found)
                start = end
            ids.extend(pieces)
        return ids[:limit]


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")
