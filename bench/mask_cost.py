"""What the turn ledger's masker costs on a large turn of many secrets of one kind (a pasted log,
a .env dump, a YAML file), at each size, with this checkout's rules and, given ``--old DIR``,
another checkout's (its brain/ledger/redact.py): CPU seconds, and the masked text compared.

Each kind is one unit repeated to the size: a password named in prose, .env lines, a shell's code
block of NAME=x commands, YAML block scalars, plain and quoted scalars going on below their key,
JSON, a transcript's escaped lines, one line of many keys, a Markdown table, a password straight after
its name, a container's env pairs, a Russian passphrase after a dash, a placeholder and a passphrase
stated before a clause, a password's name before a bracket, a comma, a question mark, keys' prefixes
(one repeated: each a match of the trigger scan), httpie's -a after another command's, aws configure's
prompts, git config's options, netlify env:set. An old rule
that costs the square of the size stops being timed for a kind once the next size would take over
``--give-up`` seconds (by its last figure, times the square of the growth).

    python bench/mask_cost.py [--sizes 0.25,1,8] [--old DIR] [--give-up 60]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mask_compare import HERE, load_redact

KINDS = {
    "prose": "the wifi password: a b c d\n",
    ".env": "DB_PASSWORD=x y\n",
    "shell block": "```bash\nDB_PASSWORD=x make test\n```\n",
    "YAML block": "password: |\n  s3cr3t\n",
    "YAML plain": "password: correct\n  horse battery\n",
    "YAML quoted": "password: 'correct\n  horse'\n",
    "JSON": '{"password": "hunter22"}\n',
    "escaped lines": '"text": "password: x\\nuser: b\\n",\n',
    "one line": "password: | ",
    "headers": "Authorization: Bearer abcdef123456\n",
    ".netrc": "machine example.com login bob password hunter22\n",
    "password is": "my password is hunter22x\n",
    "name alone": "user bob, password hunter22x, pwd Zx9q!wer; the password manager\n",
    "Russian": "пароль:\n  секрет123\n",
    "table": "| key | value |\n|---|---|\n| password | hunter22x |\n",
    "env pairs": "- name: DB_PASSWORD\n  value: hunter22x\n",
    "Russian dash": "пароль — синий кит плывёт, а логин bob\n",
    "placeholder": "password: <your password>\nthe secret is correct horse battery staple and more\n",
    "password aside": "the password (optional); username, password, email; the db password? see below\n",
    "key prefixes": "hf_ sgp_ bkua_ sq0atp- a3- dt0c01. AC0123:0123 0123456789abcdef-us1 ",
    "one prefix": "hf_",
    "httpie": "ls -a x:y; |http |http -a u:p\n",
    "aws configure": "AWS Secret Access Key [None]: x\nAWS Access Key ID []: \n",
    "git config": "git config -f -f -f -f -f -f -f -f -f -f -f -f -f -f -f -f -f -f -f x\n",
    "netlify": "netlify env:set A_TOKEN x --secret; netlify env:set A b\n",
}


def cpu(redact: Callable[[str], str], text: str) -> tuple[float, str]:
    """(the CPU seconds ``redact`` takes over ``text``, what it gives)."""
    started = time.process_time()
    masked = redact(text)
    return time.process_time() - started, masked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,8", help="MB, comma-separated, ascending")
    parser.add_argument("--old", type=Path, help="another checkout, timed and compared against this one")
    parser.add_argument("--give-up", type=float, default=60.0, help="seconds an old step may be expected to take")
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    new = load_redact(HERE, "redact_new")
    old = load_redact(args.old, "redact_old") if args.old else None
    print(f"{'kind':14} {'MB':>5} {'this s':>8} {'old s':>8}  same")
    for kind, unit in KINDS.items():
        last: tuple[float, float] | None = None  # (MB, old seconds)
        for mb in sizes:
            text = unit * max(1, int(mb * 1_000_000 / len(unit.encode())))
            this, masked = cpu(new, text)
            old_cell, same = "-", ""
            expected = last[1] * (mb / last[0]) ** 2 if last else 0.0
            if old is not None and expected <= args.give_up:
                seconds, before = cpu(old, text)
                last = (mb, seconds)
                old_cell, same = f"{seconds:.2f}", "yes" if before == masked else "NO"
            elif old is not None:
                old_cell = f"~{expected:.0f}"  # not run: its last figure times the square of the growth
            print(f"{kind:14} {mb:5g} {this:8.2f} {old_cell:>8}  {same}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
