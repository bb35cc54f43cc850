"""How many real notes each encoding rule of ``brain.notes`` touches, and how often the legacy
Cyrillic rule (cp1251 / KOI8-R read for bytes that are not UTF-8) would fire where it must not.

For each vault given, every ``.md`` note's bytes are counted: a UTF-8 BOM, a UTF-16 BOM, CRLF,
CR-only and mixed line endings, invalid UTF-8 (and of it, read as cp1251 or KOI8-R), NULs
(trailing padding only, or amid the text), and binary by ``looks_binary``. Then the false
positives and misses of the legacy rule:

- every note holding non-ASCII bytes is handed to it as if its bytes were not UTF-8 (UTF-8
  Russian read as cp1251 is "Р—Р°", which it must refuse);
- every note that can be written in Latin-1 and holds a non-ASCII letter, so written (old
  European notes), must not be read as Cyrillic;
- generated Latin-1 text (``--samples`` passages of French, German, Spanish, Portuguese,
  Swedish and Icelandic words with their accents) must not be either;
- every note holding Cyrillic, written in cp1251 and in KOI8-R, must come back as it was.

    python bench/note_encodings.py VAULT [VAULT ...] [--samples 10000]
"""

from __future__ import annotations

import argparse
import collections
import random
from pathlib import Path

from brain.notes import _legacy_cyrillic, decode, looks_binary

RUSSIAN = (
    "заметка Москва погода зимой снег мороз встреча проект задача список книга память "
    "Петербург работа идея вопрос ответ ёлка объём съезд щука жёлтый и в на с по"
).split()
WORDS = (
    "café à bientôt déjà élève où crème garçon Noël français été "
    "Grüße über schön Mädchen Straße größer Äpfel fünf "
    "año niño mañana corazón está señor jamón información "
    "não coração ação você três "
    "smörgås räksmörgås fjäll övning "
    "þjóð ævintýri Ísland íslenska "
    "the and of to in is for with on as at by"
).split()


def counts(vault: Path, line: dict[str, int]) -> None:
    for path in sorted(vault.rglob("*.md")):
        data = path.read_bytes()
        line["notes"] += 1
        line["UTF-8 BOM"] += data.startswith(b"\xef\xbb\xbf")
        line["UTF-16 BOM"] += data.startswith((b"\xff\xfe", b"\xfe\xff"))
        crlf = data.count(b"\r\n")
        cr = data.count(b"\r") - crlf
        lf = data.count(b"\n") - crlf
        line["CRLF only"] += bool(crlf) and not cr and not lf
        line["CR only"] += bool(cr) and not crlf and not lf
        line["mixed endings"] += sum(map(bool, (crlf, cr, lf))) > 1
        stripped = data.rstrip(b"\x00")
        line["NUL padding"] += len(stripped) < len(data)
        line["NULs amid text"] += b"\x00" in stripped
        line["binary"] += looks_binary(data)
        warnings = decode(data)[1] if not looks_binary(data) else []
        line["invalid UTF-8"] += any("UTF-8" in w for w in warnings)
        line["read as cp1251/KOI8-R"] += any("(Cyrillic)" in w for w in warnings)
        if max(data, default=0) > 127:
            line["non-ASCII notes tried as legacy"] += 1
            line["  ... UTF-8 taken as legacy Cyrillic"] += _legacy_cyrillic(data) is not None
        text = decode(data)[0]
        try:
            latin = text.encode("latin-1")
        except UnicodeEncodeError:
            latin = b""
        if max(latin, default=0) > 127:
            line["Latin-1 notes"] += 1
            line["  ... Latin-1 taken as Cyrillic"] += "(Cyrillic)" in " ".join(decode(latin)[1])
        if any("\u0400" <= c <= "\u04ff" for c in text):
            for codec in ("cp1251", "koi8_r"):
                try:
                    legacy = text.encode(codec)
                except UnicodeEncodeError:
                    continue
                line[f"Cyrillic notes in {codec}"] += 1
                line[f"  ... {codec} read back as written"] += decode(legacy)[0] == text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args()
    for vault in args.vaults:
        line: collections.Counter[str] = collections.Counter()
        counts(vault, line)
        print(f"{vault.name}:")
        for key, value in line.items():
            print(f"  {key}: {value:,}")
    rng = random.Random(1)
    wrong = 0
    for _ in range(args.samples):
        passage = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 60))).encode("latin-1")
        wrong += _legacy_cyrillic(passage) is not None
    print(f"generated Latin-1 passages: {args.samples:,}, taken as Cyrillic: {wrong:,}")
    for codec, name in (("cp1251", "cp1251"), ("koi8_r", "KOI8-R")):
        right = missed = 0
        for _ in range(args.samples):
            passage = " ".join(rng.choice(RUSSIAN) for _ in range(rng.randint(1, 30)))
            text, warnings = decode(passage.encode(codec))
            right += text == passage and f"as {name} " in warnings[0]
            missed += "(Cyrillic)" not in warnings[0]
        print(
            f"generated Russian passages in {name}: {args.samples:,}, read right: {right:,}, not read as Cyrillic: {missed:,}"
        )


if __name__ == "__main__":
    main()
