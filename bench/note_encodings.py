"""How many real notes each encoding rule of ``brain.notes`` touches, how generated notes in each
encoding are read (a confusion table), and how many binary files the NUL rules take for text.

For each vault given, every ``.md`` note's bytes are counted: a UTF-8 BOM, a UTF-16 BOM, CRLF,
CR-only and mixed line endings, invalid UTF-8 (and of it, read as cp1251, KOI8-R, cp1252 or
the other legacy code pages),
UTF-16 without a BOM, NULs (trailing padding only, or amid the text), and binary by
``looks_binary``. Then the false positives of the legacy rules on real text:

- every note holding non-ASCII bytes is handed to them as if its bytes were not UTF-8 (UTF-8
  Russian read as cp1251 is "Р—Р°", which they must refuse);
- every note that can be written in cp1252 and holds a non-ASCII letter, so written (old
  European notes), must be read back as it was, not as Cyrillic; so too in cp1250, cp1253,
  cp1254, cp1257, cp1255 and cp1256;
- every note holding Cyrillic, written in cp1251 and in KOI8-R, must come back as it was.

Then ``--samples`` generated notes of each kind (Russian sentences in cp1251 and KOI8-R,
French/German/Spanish/Portuguese/Italian in cp1252, Polish, Czech and Hungarian in cp1250 and
ISO-8859-2, Greek in cp1253, Turkish in cp1254, Lithuanian, Latvian and Estonian in cp1257,
Hebrew in cp1255 and ISO-8859-8, Arabic in cp1256, Ukrainian in cp1251 and KOI8-U, Belarusian
in cp1251,
UTF-8 of all these with one byte broken, and UTF-16 without a BOM) are decoded, and a table
counts what each kind was read as, and how many came back exactly as written ("right"; for
broken UTF-8, its broken byte replaced or read as cp1252's "ÿ", the rest as written).

Then how long a 1 MB note of each encoding takes to read.

``--binaries DIR ...`` reads the first 8 KB of every file under the folders and, of those with
NULs amid their bytes, counts the ones ``looks_binary`` takes for text, by rule, naming a few.

    python bench/note_encodings.py VAULT [VAULT ...] [--samples 10000] [--binaries DIR ...]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import time
from pathlib import Path

from brain.notes import _legacy, _utf8_with_stray_nuls, decode, looks_binary

RUSSIAN = (
    "заметка Москва погода зимой снег мороз встреча проект задача список книга память "
    "Петербург работа идея вопрос ответ ёлка объём съезд щука жёлтый сказал ушёл привет "
    "я ты он она мы вы они это что как где когда потому и в на с по к у о а но да нет"
).split()
WESTERN = (
    "café à bientôt déjà élève où crème garçon Noël français été l’été aujourd’hui cœur "
    "Grüße über schön Mädchen Straße größer Äpfel fünf Größe "
    "año niño mañana corazón está señor jamón información ¿qué? ¡hola! "
    "não coração ação você três "
    "perché città più così già "
    "the and of to in is for with on as at by le la les der die das el los"
).split()
POLISH = "zażółć gęślą jaźń już był się że są dzień łza mąż ręka ból Łódź Kraków".split()
CZECH = "příliš žluťoučký kůň úpěl ďábelské ódy město řeka čeština dnes ráno škola Plzeň Brno".split()
HUNGARIAN = "árvíztűrő tükörfúrógép főváros új hídja őszre készül mondta ünnep gyönyörű".split()
GREEK = "Αθήνα είναι η πρωτεύουσα της Ελλάδας σήμερα ο καιρός ζεστός και θάλασσα καλημέρα κόσμε".split()
TURKISH = "pijamalı hasta yağız şoföre çabucak güvendi İstanbul bugün hava çok güzel değil akşam ılık".split()
HEBREW = "שלום עולם מה שלומך היום אני הולך לבית הספר מחר בבוקר ספרים חדשים ירושלים תל אביב מים לחם עץ כנף".split()
ARABIC = "مرحبا بالعالم كيف حالك اليوم أنا ذاهب إلى المدرسة غدا في الصباح كتب جديدة القاهرة مدينة جميلة".split()
UKRAINIAN = "привіт як справи їжак ґанок європейський Київ сьогодні гарна погода їсти яблуко і груші".split()
BELARUSIAN = "прывітанне як справы ўсё добра Беларусь сёння цёплае надвор'е і мова".split()
LITHUANIAN = "labas rytas ačiū gerai šiandien žiūrėjau į dangų ąžuolas ežeras miškas Vilnius".split()
LATVIAN = "sveiki šodien ir jauka diena ķirbji un ļoti garšīga maize Rīga ūdens mēness".split()
ESTONIAN = "tere hommikust täna on ilus päev šokolaad žürii õun Tallinn jõulud müük".split()
CJK = "会议 记录 项目 任务 今天 明天 问题 答案 東京 天気 メモ ノート".split()
PUNCTUATION = {"cp1251": ["—", "«", "»", "№", "…"], "koi8_r": ["-", '"'], "cp1252": ["“", "”", "–", "…", "€"]}
LEGACY = ("cp1251", "KOI8-R", "KOI8-U", "cp1252", "cp1250", "ISO-8859-2", "cp1253", "cp1254", "cp1257")
LEGACY += ("cp1255", "ISO-8859-8", "cp1256")
KINDS = ("UTF-8", *LEGACY, "UTF-16LE", "UTF-16BE", "replaced", "binary")


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
        line["read as cp1251/KOI8-R/KOI8-U"] += any("(Cyrillic)" in w for w in warnings)
        for kind in LEGACY[3:]:
            line[f"read as {kind}"] += any(f"as {kind} " in w for w in warnings)
        line["UTF-16 without a BOM"] += any("no byte-order mark" in w for w in warnings)
        if max(data, default=0) > 127:
            line["non-ASCII notes tried as legacy"] += 1
            line["  ... UTF-8 taken as legacy"] += _legacy(data, 0) is not None
        text = decode(data)[0]
        for codec in ("cp1252", "cp1250", "cp1253", "cp1254", "cp1257", "cp1255", "cp1256"):
            try:
                legacy = text.encode(codec)
            except UnicodeEncodeError:
                continue
            if max(legacy, default=0) > 127:
                line[f"{codec} notes"] += 1
                line[f"  ... {codec} read back as written"] += decode(legacy)[0] == text
                line[f"  ... {codec} taken as Cyrillic"] += "(Cyrillic)" in " ".join(decode(legacy)[1])
        if any("\u0400" <= c <= "\u04ff" for c in text):
            for codec in ("cp1251", "koi8_r"):
                try:
                    legacy = text.encode(codec)
                except UnicodeEncodeError:
                    continue
                line[f"Cyrillic notes in {codec}"] += 1
                line[f"  ... {codec} read back as written"] += decode(legacy)[0] == text


def read_as(data: bytes) -> str:
    """What ``decode`` read ``data`` as: one of ``KINDS``."""
    if looks_binary(data):
        return "binary"
    warnings = " ".join(decode(data)[1])
    for kind in (*LEGACY, "UTF-16LE", "UTF-16BE"):
        if f"as {kind} " in warnings:
            return kind
    return "replaced" if "replaced" in warnings else "UTF-8"


def passage(rng: random.Random, words: list[str], most: int, marks: list[str] = ()) -> str:  # type: ignore[assignment]
    chosen = [rng.choice(words) for _ in range(rng.randint(1, most))]
    if marks and rng.random() < 0.5:
        chosen.insert(rng.randrange(len(chosen) + 1), rng.choice(marks))
    return " ".join(chosen) + rng.choice(("", ".", "\n", "?\n"))


def broken(rng: random.Random, text: str) -> tuple[bytes, str]:
    """``text`` in UTF-8 with one byte made invalid, and the text it should decode to."""
    data = bytearray(text.encode())
    at = rng.randrange(len(data))
    while data[at] & 0xC0 == 0x80:  # break a character where it starts
        at -= 1
    end = at + 1
    while end < len(data) and data[end] & 0xC0 == 0x80:
        end += 1
    data[at:end] = b"\xff"
    return bytes(data), data.decode("utf-8", errors="replace")


def confusion(samples: int) -> None:
    rng = random.Random(1)
    rows: dict[str, collections.Counter[str]] = {}

    def tally(row: str, data: bytes, *expected: str) -> None:
        counter = rows.setdefault(row, collections.Counter())
        counter[read_as(data)] += 1
        counter["right"] += not looks_binary(data) and decode(data)[0] in expected

    for _ in range(samples):
        russian = passage(rng, RUSSIAN, 30, PUNCTUATION["cp1251"])
        tally("Russian, cp1251", russian.encode("cp1251"), russian)
        russian = passage(rng, RUSSIAN, 30, PUNCTUATION["koi8_r"])
        tally("Russian, KOI8-R", russian.encode("koi8_r"), russian)
        western = passage(rng, WESTERN, 60, PUNCTUATION["cp1252"])
        if max(western.encode("cp1252")) > 127:
            tally("Western, cp1252", western.encode("cp1252"), western)
        for name, words, codecs in (
            ("Polish", POLISH, ("cp1250", "iso8859_2")),
            ("Czech", CZECH, ("cp1250", "iso8859_2")),
            ("Hungarian", HUNGARIAN, ("cp1250",)),
            ("Greek", GREEK, ("cp1253",)),
            ("Turkish", TURKISH, ("cp1254",)),
            ("Lithuanian", LITHUANIAN, ("cp1257",)),
            ("Latvian", LATVIAN, ("cp1257",)),
            ("Estonian", ESTONIAN, ("cp1257",)),
            ("Hebrew", HEBREW, ("cp1255", "iso8859_8")),
            ("Arabic", ARABIC, ("cp1256",)),
            ("Ukrainian", UKRAINIAN, ("cp1251", "koi8_u")),
            ("Belarusian", BELARUSIAN, ("cp1251",)),
        ):
            text = passage(rng, words + WESTERN[-20:], 30)
            for codec in codecs:
                if max(text.encode(codec)) > 127:
                    tally(f"{name}, {codec}", text.encode(codec), text)
        for name, words in (("Russian", RUSSIAN), ("Western", WESTERN), ("English", WESTERN[-20:])):
            data, expected = broken(rng, passage(rng, words, 40))
            # right: the broken byte replaced, or read as cp1252's "ÿ", the rest as written
            tally(f"{name}, UTF-8, 1 byte broken", data, expected, expected.replace("\ufffd", "ÿ"))
        text = passage(rng, rng.choice((RUSSIAN, WESTERN, CJK + WESTERN[-20:])), 40)
        tally("UTF-16LE, no BOM", text.encode("utf-16-le"), text)
        tally("UTF-16BE, no BOM", text.encode("utf-16-be"), text)
    width = max(map(len, rows))
    print(f"{'generated note':<{width}}  " + "  ".join(f"{k:>10}" for k in (*KINDS, "right")))
    for row, counter in rows.items():
        total = sum(counter[k] for k in KINDS)
        cells = "  ".join(f"{counter[k]:>10,}" for k in KINDS)
        print(f"{row:<{width}}  {cells}  {100 * counter['right'] / total:>7.2f}%")


def speed() -> None:
    """How long looks_binary and decode take on a 1 MB note of each encoding."""
    rng = random.Random(2)
    notes = {
        "cp1251": " ".join(rng.choice(RUSSIAN) for _ in range(150_000)).encode("cp1251"),
        "cp1252": " ".join(rng.choice(WESTERN) for _ in range(150_000)).encode("cp1252"),
        # one language's: the mix above is no one language's, and every Latin code page is scored
        "cp1252, French": " ".join(rng.choice(WESTERN[:14] + WESTERN[-20:]) for _ in range(150_000)).encode("cp1252"),
        "cp1250": " ".join(rng.choice(CZECH) for _ in range(150_000)).encode("cp1250"),
        "cp1253": " ".join(rng.choice(GREEK) for _ in range(150_000)).encode("cp1253"),
        "cp1255": " ".join(rng.choice(HEBREW) for _ in range(150_000)).encode("cp1255"),
        "cp1256": " ".join(rng.choice(ARABIC) for _ in range(150_000)).encode("cp1256"),
        "cp1257": " ".join(rng.choice(LITHUANIAN) for _ in range(150_000)).encode("cp1257"),
        "UTF-16LE, no BOM": " ".join(rng.choice(WESTERN) for _ in range(100_000)).encode("utf-16-le"),
        "UTF-8": " ".join(rng.choice(WESTERN + RUSSIAN) for _ in range(100_000)).encode(),
    }
    for name, data in notes.items():
        data = data[: 1 << 20]
        start = time.perf_counter()
        for _ in range(5):
            looks_binary(data)
            decode(data)
        print(f"a 1 MB note in {name}: {(time.perf_counter() - start) / 5 * 1000:.0f} ms to read")


def binaries(folders: list[Path]) -> None:
    files = with_nuls = 0
    text: collections.Counter[str] = collections.Counter()
    named: list[str] = []
    for folder in folders:
        for directory, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(directory, name)
                try:
                    if not os.path.isfile(path) or os.path.islink(path):
                        continue
                    with open(path, "rb") as handle:
                        head = handle.read(8192)
                except OSError:
                    continue
                files += 1
                if b"\x00" not in head.rstrip(b"\x00") or head.startswith((b"\xff\xfe", b"\xfe\xff")):
                    continue
                with_nuls += 1
                if not looks_binary(head):
                    rule = "stray NULs" if _utf8_with_stray_nuls(head.rstrip(b"\x00")) else "UTF-16 without a BOM"
                    text[rule] += 1
                    if len(named) < 20:
                        named.append(f"{rule}: {path}")
    print(f"files: {files:,}, with NULs amid their first 8 KB (no UTF-16 BOM): {with_nuls:,}")
    print("read as text: " + (", ".join(f"{rule} {n:,}" for rule, n in text.items()) or "none"))
    for line in named:
        print("  " + line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="*", type=Path)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--binaries", nargs="*", type=Path, default=[])
    args = parser.parse_args()
    for vault in args.vaults:
        line: collections.Counter[str] = collections.Counter()
        counts(vault, line)
        print(f"{vault.name}:")
        for key, value in line.items():
            print(f"  {key}: {value:,}")
    if args.samples:
        confusion(args.samples)
        speed()
    if args.binaries:
        binaries(args.binaries)


if __name__ == "__main__":
    main()
