"""What the rules of _RULES do with a match, past a bare prefix's mask: whether a name or a value holds
a secret (_secret_name, _holds_no_secret, _is_one_value), where a line starts and how deeply it is
escaped, secrets assigned to a name (_mask_assignments, values below their key, YAML blocks), stated
in prose (_mask_all_stated) or given to a command (_REPLACERS), in Markdown tables (_mask_tables),
and key material without a name (_mask_pem_bodies, _looks_random)."""

from __future__ import annotations

import functools
import itertools
import math
import re
from bisect import bisect_right
from collections.abc import Iterator

from .patterns import (
    _ATTRIBUTE_PATH,
    _BARE,
    _CLOSING,
    _CODE_OPERAND,
    _CODE_VALUE,
    _CODE_WORDS,
    _CREDENTIAL_KEYS,
    _FIELD_NAMES,
    _GAP,
    _HINT,
    _LITERALS,
    _LOGIN_BEFORE,
    _MORE_WORDS,
    _NAME_WORD,
    _NOT_ONE_VALUE,
    _NOT_PASSWORDS,
    _NOT_SECRET_KEYS,
    _OWNED_BEFORE,
    _PASS_COLON,
    _PIN,
    _PLAIN_NOT_SECRET,
    _POINTERS,
    _PROSE_AFTER,
    _PYTHON_KEYWORDS,
    _QUALIFIERS,
    _REFERENCE_PARTS,
    _REFERENCE_ROOTS,
    _REFERENCE_TAGS,
    _RUSSIAN_SECRET,
    _SECRET_WORDS,
    _SET_BEFORE,
    _SET_BEFORE_RU,
    _SIGNED_WORD,
    _SNAKE,
    _STATED,
    _STATED_NAME,
    _STATED_TRIGGERS,
    _STATED_WORD,
    _STRONG,
    _SUDO_BEFORE,
    _TEMPLATE_VALUE,
    _VALUE,
    _VALUE_AT,
    _VAULT_PAIR,
    _YAML_PROPERTIES,
    MASK,
    _Lazy,
    _quoted,
)

_QUOTE_LEAD = _Lazy(r"\$'|\\*[\"']")


def _unquote(value: str) -> tuple[str, str, str]:
    """``value`` as (opening quote, inside, closing quote); quotes may be escaped (``\\"``)."""
    lead = _QUOTE_LEAD.match(value)  # bash's ANSI-C quoting ($'x') closes with a plain '
    if lead is None:
        return "", value, ""
    quote = lead.group()
    closing = quote.lstrip("$")
    if len(value) >= len(quote) + len(closing) and value.endswith(closing):
        return quote, value[len(quote) : -len(closing)], closing
    return quote, value[len(quote) :], ""  # a quote never closed


def _mask_value(match: re.Match[str]) -> str:
    # Keep the quotes of a quoted value; leave a masked value or a $VARIABLE alone.
    key = match.group(1)
    opening, bare, closing = _unquote(match.group(2))
    if not bare or bare.startswith((MASK, "$")):
        return match.group(0)
    if not opening and (rest := _next_lines(match, bare)):
        return f"{key}{MASK}{rest}"
    return f"{key}{opening}{MASK}{closing}"


def _next_lines(match: re.Match[str], bare: str) -> str:
    """What an unquoted value read past its line's break, from the break on ("" when it read none): in
    JSON escaped twice over ("\"curl -u bob:x\\nnext\""), a bare word takes an even run of backslashes
    for a backslash, so the next line was masked with the value."""
    if "\\" not in bare or (depth := _line_depth(match.string, match.start())) < 2:
        return ""
    brk = _escaped(depth)[0].search(bare)
    return bare[brk.start() :] if brk is not None else ""


def _mask_labelled(match: re.Match[str]) -> str:
    # A value after a label in prose is judged as an assignment's (_mask_assignments):
    # "пароль: None" or code is no secret.
    opening, bare, closing = _unquote(match.group(2))
    if _holds_no_secret(opening, bare) or _BRACKETED_AT.match(match.string, match.start(2)):
        return match.group(0)
    if (
        not opening
        and bare.lower() in _POINTERS_RU
        and _CLAUSE_VERBS_RU.isdisjoint(match.group("more").lower().split())
    ):
        return match.group(0)  # "пароль: в сейфе", "см. вики", "не задан": where it is, or none ("в начале было
        # слово" is a passphrase: a verb of a clause of its own, as _points_somewhere reads English)
    label = match.group(1)
    sep = re.search(r"[ \t]*(?::=|[=:])[ \t]*\Z", label)
    # "пароль: один два три" is one value, as YAML's is (_MORE_WORDS); a quoted one ends at its quote.
    more = "" if not opening and sep and _runs_to_line_end(sep.group()) else match.group("more")
    # One word's full stop or question mark ends its sentence, as English's stated value keeps it (_after_value):
    # "Пароль от роутера: Qwerty. Логин: admin" lost its "." with the value.
    tail = bare[len(bare.rstrip(".?")) :] if not opening and not match.group("more") and bare.rstrip(".?") else ""
    return f"{label}{opening}{MASK}{closing}{tail}{more}"


def _holds_no_secret(opening: str, bare: str) -> bool:
    """An assigned value that is no secret: empty, masked already, a $VARIABLE, a literal
    (``_LITERALS``), a placeholder (``_PLACEHOLDER``), or unquoted code (``_CODE_VALUE``)."""
    if not bare or bare.startswith((MASK, "$")) or bare.lower() in _LITERALS:
        return True
    if bare[0] in _PLACEHOLDER_FIRST and _PLACEHOLDER.fullmatch(bare):
        return True
    if bare[0] in "{<%" and _TEMPLATE_VALUE.fullmatch(bare):
        return True
    return not opening and (_CODE_VALUE_AT.match(bare) is not None or _names_a_setting(bare))


def _names_a_setting(bare: str) -> bool:
    """Whether an unquoted value is an attribute path of code that holds a secret (_ATTRIBUTE_PATH)."""
    if "." not in bare or not _ATTRIBUTE_PATH.fullmatch(bare):
        return False
    parts = bare.rstrip(")]}").split(".")
    if parts[0].lower().lstrip("$") in _REFERENCE_ROOTS and _code_attribute(parts[-1]):
        return True
    return any(
        part.lower() in _REFERENCE_PARTS or (("_" in part or part.isupper()) and _secret_name(part)) for part in parts
    )


def _code_attribute(part: str) -> bool:
    """Whether the last part of an attribute path is spelt as code spells one (``db_password``, ``X``,
    ``apiKey``), or names a secret as a Go or C# field does (``cfg.Password``, ``opts.APIKey``): a word
    with a capital alone, naming none, is a password's ("password: data.Center")."""
    if not part[:1].isupper() or part.isupper() or "_" in part:
        return True
    return any(word in _SECRET_WORDS or word.endswith(_STRONG) for word in _name_words(part))


_CODE_VALUE_AT = _Lazy(_CODE_VALUE)


# First words of a Russian label's value that say where its secret is, or that there is none, as
# _POINTERS do in English: "пароль: в менеджере паролей", "см. вики", "не задан", "нет".
_POINTERS_RU = frozenset(
    "в во на см см. смотри спроси спросите хранится хранятся лежит лежат нет не пусто пустой отсутствует"
    " задан задаётся указан через из у тот такой как"
    # ... and where English's "given", "get", "check", "saved", "provided", "can", "shared", "sent",
    # "managed", "will" read past ("пароль: выдаёт админ", "получить у Маши", "уточнить у Маши"): each
    # was masked as a value of one word, the rest kept
    " выдаёт выдает выдан выдана выдают получить получи получите уточнить уточни уточните проверить"
    " проверь сохранён сохранен сохранена предоставляет предоставлен предоставлена можно общий общая"
    " отправил отправила отправлю отправлен отправлена пришлют пришлю прислал прислала управляется".split()
)


_CLAUSE_VERBS_RU = frozenset("был была было были есть будет".split())


# A placeholder where a secret would be, no secret: "N/A", "TBD", "TODO", a dash, "xxxx", stars, a
# "<your password>" to fill in (words, no digit: "<hunter22>" is a value in brackets). A note's
# "password: N/A" was stored as "password: ***".
_PLACEHOLDER = _Lazy(r"(?i:n/?a|н/?д|tbd|tba|todo|fixme|x{3,}|\*+|[-—–?]{1,3}|<[^\W\d](?:[^\W\d]|[ ./-]){0,60}>)[.,;]?")


_PLACEHOLDER_FIRST = frozenset("nNнНtTfFxX*-—–?<")


# The same where an unquoted value's first word is read alone ("<your", then "password>"): the
# whole placeholder from its start.
_BRACKETED_AT = _Lazy(r"\\*[\"']?<[^\W\d](?:[^\W\d]|[ ./-]){0,60}>(?![\w<])")  # not a tag: "<b>x</b>"


def _mask_user_password(match: re.Match[str]) -> str:
    # "user:password" keeps the user; a value without a colon is a user alone (curl prompts).
    key = match.group(1)
    opening, value, closing = _unquote(match.group(2))
    user, colon, password = value.partition(":")
    if not colon or not password or password.startswith((MASK, "$")):
        return match.group(0)
    if not opening and (rest := _next_lines(match, value)):
        return f"{key}{user}:{MASK}{rest}"
    return f"{key}{opening}{user}:{MASK}{closing}"


# Where a command httpie's (or xh's) -a/--auth is an option of starts, reading back from the option.
_HTTPIE_BEFORE_AUTH = _Lazy(r"(?:^|[\n;&|(`\"]|\\n|\$ )[ \t]*(?:sudo[ \t]+)?(?:https?|xhs?)[ \t][^\n;&|]*\Z")


_BEARER_AUTH = _Lazy(r"(?<![\w-])(?:-A[ \t]*|--auth-type(?:=|[ \t]+))bearer\b")


def _mask_httpie_auth(match: re.Match[str]) -> str:
    """httpie's -a/--auth value: user:password keeps its user; a bearer token (-A bearer) is masked whole; an
    option of another command stays."""
    text, start = match.string, match.start()
    command = _HTTPIE_BEFORE_AUTH.search(text, max(0, start - 400), start)
    if command is None:
        return match.group(0)
    if _BEARER_AUTH.search(text, command.start(), start) is not None:
        return _mask_value(match)
    return _mask_user_password(match)


def _mask_netlify_env(match: re.Match[str]) -> str:
    """netlify env:set's value, where its name names a secret or --secret follows."""
    marked = f"{match.group('options')} {match.group('rest')}"
    if not _secret_name(match.group("name")) and re.search(r"(?<!\S)--secret\b", marked) is None:
        return match.group(0)
    opening, bare, closing = _unquote(match.group("value"))
    if not bare or bare.startswith((MASK, "$")):
        return match.group(0)
    start, (value_start, value_end) = match.start(), match.span("value")
    return match.string[start:value_start] + f"{opening}{MASK}{closing}" + match.string[value_end : match.end()]


def _mask_named(match: re.Match[str]) -> str:
    """The value of a match whose ``name`` holds a secret (``_secret_name``), masked; its
    quotes, a $VARIABLE, a literal or what is masked already stay."""
    name = match.group("name").rsplit(":", 1)[-1]  # an XML namespace says nothing
    opening, bare, closing = _unquote(match.group("value").strip())
    if not _secret_name(name) or _holds_no_secret(opening, bare):
        return match.group(0)
    start, end = match.start(), match.end()
    value_start, value_end = match.span("value")
    text = match.string
    return text[start:value_start] + f"{opening}{MASK}{closing}" + text[value_end:end]


def _mask_short_name(match: re.Match[str]) -> str:
    """A quoted value after a quoted ``pass``, ``pwd`` or ``pw`` (a JSON or a dict's key), masked when it
    looks chosen as a password (a letter and a digit or a sign, or a passphrase's words): not a path
    (``"pwd": "/home/bob"``, the working directory), a test's outcome (``"pass": "PASSED"``), none."""
    opening, bare, closing = _unquote(match.group("value"))
    if _holds_no_secret(opening, bare) or "/" in bare or bare.startswith("~") or not closing:
        return match.group(0)
    if not _STATED_WORD.fullmatch(bare) and not _is_passphrase(bare.split()):
        return match.group(0)
    return match.string[match.start() : match.start("value")] + f"{opening}{MASK}{closing}"


# The pair before a connection string's password: "UID=sa", "Server=tcp:x,1433", "User ID=sa".
_CONNECTION_PAIR = _Lazy(r"[A-Za-z][\w \t]{0,30}=[^;\n=\"']{0,200}\Z")


def _mask_connection_password(match: re.Match[str]) -> str:
    """A connection string's password, after another ``key=value;`` pair: one ``;`` in code
    (``x = 1;password=y``) is no connection string, its assignment is judged as one."""
    text, start = match.string, match.start()
    value = match.group("value")
    if not _CONNECTION_PAIR.search(text, max(0, start - 240), start) or value == MASK:
        return match.group(0)
    if value[0] != "{" and _holds_no_secret("", value):
        return match.group(0)
    return text[start : match.start("value")] + MASK


def _mask_used_as(match: re.Match[str]) -> str:
    """A value a text says to use as a password ("use hunter22x as the password"): quoted, or one word
    that looks chosen as one (a letter and a digit or a sign: ``_STATED_WORD``)."""
    value = match.group("value")
    opening, bare, closing = _unquote(value) if value[0] in "\"'" else ("", value, "")
    if value[0] == "`":
        opening, bare, closing = "`", value[1:-1], "`"
    if _holds_no_secret("", bare.strip()) or _STATED_NAME.fullmatch(bare.strip()):
        return match.group(0)
    if not opening and (len(bare) < 4 or "/" in bare or not _STATED_WORD.fullmatch(bare)):
        return match.group(0)
    return f"{match.group(1)}{opening}{MASK}{closing}{match.group(3)}"


def _mask_user_slash_password(match: re.Match[str]) -> str:
    """The password after a login under one name ("creds: bob / hunter22x"): one word that looks chosen
    as one (_STATED_WORD), so "login: SSO/OAuth2" or "login: web/admin" stay."""
    value = match.group("value")
    bare = value.rstrip(".,:;!?)")
    if (
        len(bare) < 4
        or "/" in bare
        or _holds_no_secret("", bare)
        or _PLAIN_NOT_SECRET.fullmatch(bare)
        or not _STATED_WORD.fullmatch(bare)
    ):
        return match.group(0)
    return f"{match.group(1)}{MASK}{value[len(bare) :]}"


def _mask_cookies(match: re.Match[str]) -> str:
    # "a=1; b=2" -> "a=***; b=***"; a Set-Cookie's attributes after its first pair stay.
    head, pairs = match.group(1), match.group(2)
    first_only = head.lower().startswith("set-")
    out = []
    for i, pair in enumerate(pairs.split(";")):
        name, eq, value = pair.partition("=")
        masked = eq and value.strip() and not value.strip().startswith(MASK) and (i == 0 or not first_only)
        out.append(f"{name}={MASK}" if masked else pair)
    return head + ";".join(out)


def _mask_vault(match: re.Match[str]) -> str:
    # The pairs after the command's path, as "key=***"; quoted values keep their quotes.
    def pair(found: re.Match[str]) -> str:
        opening, bare, closing = _unquote(found.group(2))
        return found.group(0) if bare.startswith((MASK, "$")) else f"{found.group(1)}{opening}{MASK}{closing}"

    return match.group(1) + re.sub(_VAULT_PAIR, pair, match.group(2))


# A word of rclone's config create/update/password after its command, and the names of its backends' secrets
# no secret's name holds (_secret_name): sftp's and the others' "pass", b2's and azureblob's "key", a SAS URL.
_RCLONE_WORD = _Lazy(rf"[ \t]+(?P<word>{_VALUE})")


_RCLONE_SECRETS = frozenset("pass key sas_url".split())


def _rclone_secret(key: str) -> bool:
    return key.lower() in _RCLONE_SECRETS or _secret_name(key)


def _mask_rclone(match: re.Match[str]) -> str:
    """The values of rclone's secrets in ``config create NAME TYPE KEY VALUE …`` (``update``, ``password``:
    ``NAME KEY VALUE …``): each pair's value whose key names a secret, or a ``key=value``'s; flags are
    read past."""
    head, args = match.group(1), match.group(2)
    names = 2 if head.endswith("create") else 1  # the remote's name and, to create it, its type
    out: list[str] = []
    done = pos = 0
    key: str | None = None
    while (word := _RCLONE_WORD.match(args, pos)) is not None:
        pos = word.end()
        value = word.group("word")
        if value.startswith("-"):  # --obscure, --no-obscure, --non-interactive, --all
            key = None
            continue
        if names:
            names -= 1
            continue
        start = word.start("word")
        if key is None and "=" in value and value[0] not in "\"'$":  # key=value, one argument
            key, _, value = value.partition("=")
            start += len(key) + 1
        elif key is None:
            key = value
            continue
        opening, bare, closing = _unquote(value)
        if _rclone_secret(key) and not _holds_no_secret(opening, bare):
            out.append(args[done:start] + f"{opening}{MASK}{closing}")
            done = word.end()
        key = None
    return head + "".join(out) + args[done:]


def _mask_basic_auth(match: re.Match[str]) -> str:
    """Docker's ``"auth": "<base64>"``, masked when the base64 decodes to ``user:password``."""
    import base64  # only where a config.json's "auth" is: the hooks import this module

    encoded = match.group(2)
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return match.group(0)
    return f"{match.group(1)}{MASK}" if ":" in decoded and decoded.isprintable() else match.group(0)


# The SQL statements that set a user's password, ending where "PASSWORD" starts (_mask_sql_password).
_SQL_PASSWORD_BEFORE = _Lazy(r"(?i:\b(?:create|alter)[ \t]+(?:user|role|login)\b[^;\n]{0,200}[ \t]|\bset[ \t]+)\Z")


def _mask_sql_password(match: re.Match[str]) -> str:
    """The password of ``ALTER USER bob WITH PASSWORD 'x'``, ``CREATE LOGIN … WITH PASSWORD = 'x'``, ``SET
    PASSWORD FOR u = 'x'``: a statement that sets a user's password comes before "PASSWORD"."""
    start = match.start()
    if _SQL_PASSWORD_BEFORE.search(match.string, max(0, start - 300), start) is None:
        return match.group(0)
    return _mask_value(match)


# kubectl's --from-literal=KEY=X, the value maybe quoted (_mask_from_literal); the --value X of a command
# (_mask_value_flag).
_FROM_LITERAL = _Lazy(rf"(--from-literal(?:=|[ \t]+)\\*[\"']?[^\s=\"'\\]+=)(?![$]){_VALUE}")


_VALUE_FLAG = _Lazy(rf"(--value(?:=|[ \t]+))(?![-$]){_VALUE}")


def _mask_from_literal(match: re.Match[str]) -> str:
    return match.group(1) + _FROM_LITERAL.sub(_mask_value, match.group(2))


def _mask_value_flag(match: re.Match[str]) -> str:
    """An SSM parameter's --value when it is a SecureString, az keyvault secret set's always."""
    if "ssm" in match.group(1) and "securestring" not in match.group(2).lower():
        return match.group(0)  # a String or a StringList: a setting
    return match.group(1) + _VALUE_FLAG.sub(_mask_value, match.group(2))


# A client's name before its "login", starting a command: a line's start, after a shell's operator, a "$ "
# prompt, "sudo", a Bash tool's command string (_mask_client_login); a registry login's is read by its own rule.
_CLIENT_BEFORE_LOGIN = _Lazy(
    r"(?:^|[\n;&|(`\"]|\\n|\$ )[ \t]*(?:sudo[ \t]+)?"
    r"(?!(?:docker|podman|buildah|skopeo|nerdctl|helm|registry|the|a|an|to|your|my|this|that|its|and|or)[ \t])"
    r"[\w.-]+[ \t]+\Z"
)


def _mask_client_login(match: re.Match[str]) -> str:
    start = match.start()
    if _CLIENT_BEFORE_LOGIN.search(match.string, max(0, start - 100), start) is None:
        return match.group(0)
    return _mask_value(match)


def _mask_ini_pass(match: re.Match[str]) -> str:
    """rclone.conf's ``pass = x``, "pass" starting its line (maybe a line of JSON text); with "^" first in
    its pattern, the search tried every line's start of every text holding "pass" (6 s over 240 MB)."""
    if not _starts_line(match.string, match.start()):
        return match.group(0)
    opening, bare, closing = _unquote(match.group(2))
    return match.group(0) if _holds_no_secret(opening, bare) else f"{match.group(1)}{opening}{MASK}{closing}"


_NETRC_ENTRY = _Lazy(
    rf"(?<![\w-])(?:machine{_GAP}(?:[^\s\\]*[.:][^\s\\]*|localhost)|default)"
    rf"(?:{_GAP}(?:account|port){_GAP}[^\s\\]+)?{_GAP}\Z"
)


_PGPASS_HOST = _Lazy(r"(?:^|[\r\n]|(?<!\\)(?:\\\\)*\\n|\")[ \t]*(?:\*|[\w.\-]*[A-Za-z.][\w.\-]*)\Z")


def _mask_htpasswd(match: re.Match[str]) -> str:
    # "htpasswd -b FILE USER X" (-n: no FILE): the last argument is the password, when -b puts it there.
    flags, args = match.group("flags"), match.group("args")
    if "b" not in flags.replace("-", "").replace(" ", "").replace("\t", ""):
        return match.group(0)
    words = list(re.finditer(r"\S+", args))
    wanted = 2 if "n" in flags else 3
    if len(words) < wanted:
        return match.group(0)
    word = words[wanted - 1]
    opening, bare, closing = _unquote(word.group())
    if _holds_no_secret(opening, bare):
        return match.group(0)
    return match.group(1) + args[: word.start()] + f"{opening}{MASK}{closing}" + args[word.end() :]


def _mask_netrc(match: re.Match[str]) -> str:
    # "login U password X" masked where "machine HOST" or "default" comes right before it.
    if _NETRC_ENTRY.search(match.string, max(0, match.start() - 300), match.start()) is None:
        return match.group(0)
    return _mask_value(match)


def _mask_pgpass(match: re.Match[str]) -> str:
    # ":port:db:user:X" masked where a host starts the line before it.
    if _PGPASS_HOST.search(match.string, max(0, match.start() - 300), match.start()) is None:
        return match.group(0)
    start, end = match.span(1)
    return match.string[match.start() : start] + MASK + match.string[end : match.end()]


def _mask_stated(match: re.Match[str]) -> str:
    # "my password is ***": a quoted value, or one word that looks chosen as a password.
    start = match.start()
    if (
        start
        and (match.string[start - 1].isalnum() or match.string[start - 1] in "_-")
        and not _after_escaped_break(match.string, start)
    ):
        return match.group(0)  # a word that ends in one (bypass is, db-secret is: a name's, not prose)
    if match.group("plain") is not None:  # "password hunter22x": one word, which looks chosen as one
        return _mask_stated_plain(match)
    if match.group("pin") is not None:  # "my PIN is 4821": digits alone
        return _mask_stated_pin(match)
    if match.group("tok") is not None:  # "my token is x": a token's shape, not a model's ("the token is '<|eos|>'")
        return _mask_stated_token(match)
    if match.group("answer") is not None:  # "the security answer is fluffy": words, to the clause's end
        return _mask_answer(match)
    return _mask_stated_value(match)


def _mask_stated_plain(match: re.Match[str]) -> str:
    """A password named with no verb, "password hunter22x": one word (or a quoted value) that looks
    chosen as one, or a login's password, or a passphrase's words."""
    lead, start = match.group(1), match.start()
    if start and match.string[start - 1] in "$./\\&*":  # $PWD, os.pwd, /bin/pwd, a YAML &pw: names
        return match.group(0)
    if match.group(0).startswith("passwd") and _SUDO_BEFORE.search(match.string, max(0, start - 80), start):
        return match.group(0)  # "sudo passwd deploy1": the command, and the user whose password it sets
    word = match.group("bare")
    if word is None:
        return _mask_stated_plain_quoted(match)
    if (
        lead[:1] in "Пп"
        and _LOGIN_BEFORE.search(match.string, max(0, start - 60), start)
        and (count := _stated_passphrase(match, least=1))
    ):
        return f"{lead}{MASK}{_after_words(match, count)}"  # "логин bob, пароль синий кит": a login's password
    letters = word.rstrip(".,:;!?")
    if (
        lead[:1] in "Pp"
        and letters.isalpha()  # a word with a digit or a sign is judged below, as anywhere ("***" masked already)
        and not letters.islower()
        and _LOGIN_BEFORE.search(match.string, max(0, start - 60), start)
        and _STATED_END.match(match.string, match.end("bare")) is not None
        and _is_passphrase([letters], least=1)
        and letters.lower() not in _VERDICTS
    ):
        # "username admin password Qwerty": a login's password, one word to its clause's end; in lower case
        # it may be prose still ("login page password field")
        return f"{lead}{MASK}{_after_value(word, letters)}{match.group('words')}"
    if "phrase" in lead.lower() and (count := _stated_passphrase(match)):
        return f"{lead}{MASK}{_after_words(match, count)}"  # "the passphrase correct horse battery staple"
    after = match.string[match.end("bare") : match.end("bare") + 1]
    # What closes a value in apposition: its sentence's end (a full stop in the word: "the admin
    # password, hunter22x." was kept), a comma or a semicolon, the end of its line or string.
    closer = word[-1] if word[-1] in ".!" else after
    if (aside := match.group("aside")) is not None and (
        (closer if aside.strip() == "," else after, aside.strip()) not in _ASIDE_CLOSERS
        or (aside.startswith(",") and not _OWNED_BEFORE.search(match.string, max(0, start - 40), start))
    ):
        return match.group(0)  # "password (hunter22x)", "the admin password, hunter22x,", "password? hunter22x"
    if word.endswith("=") or after not in ("", " ", "\t", "\r", "\n", ",", ";", ")", "\\", '"'):
        return match.group(0)  # a piece of a longer token: <Password type="plain">, password x="y"
    bare = word.rstrip(".,:;!?*_~")  # "**Password Management:** KeePassXC": Markdown's marks
    if (
        _PLAIN_NOT_SECRET.fullmatch(bare)
        or len(bare) < 4
        or _holds_no_secret("", bare)
        or _STATED_NAME.fullmatch(bare)
        or not _STATED_WORD.fullmatch(bare)
        or ("_" in bare and _PASS_COLON.match(lead) is not None)  # "pass: test_x1": a test's name
        or (bare.startswith("!") and (bare.startswith("!!") or bare[1:].lower() in _REFERENCE_TAGS))  # a YAML tag
    ):
        return match.group(0)
    return f"{lead}{MASK}{_after_value(word, bare)}{match.group('words')}"


def _mask_stated_plain_quoted(match: re.Match[str]) -> str:
    """A quoted value after a password named with no verb: it names a field or a word as often as it
    states one, but a passphrase's words ("my passphrase 'correct horse battery staple'") name nothing."""
    lead, quote, start = match.group(1), match.group("quote"), match.start()
    value = match.group("quoted").split()
    named = _name_words(lead.strip(" \t:'’s*"))
    # one word with a letter, a digit and a sign names no field ("password `Depl0y!2024`")
    signed = len(value) == 1 and _SIGNED_WORD.fullmatch(value[0]) and not _holds_no_secret("", value[0])
    # «пароль «Qwerty»»: one word after a Russian name that no Russian prose writes (a capital, Latin letters)
    signed = signed or (
        lead[:1] in "Пп"
        and len(value) == 1
        and value[0].isalpha()
        and (value[0].isascii() or not value[0].islower())
        and value[0].lower() not in _VERDICTS
    )
    if not signed and (not _is_passphrase(value) or any(_names_a_secret(w.lower(), named) for w in value)):
        return match.group(0)
    if (aside := match.group("aside")) is not None and (
        (match.string[match.end() : match.end() + 1], aside.strip()) not in _ASIDE_CLOSERS
        or (aside.startswith(",") and not _OWNED_BEFORE.search(match.string, max(0, start - 40), start))
    ):
        return match.group(0)  # as a bare word in apposition ("the DB password, `Kq7!xP2m`, is …")
    return f"{lead}{quote}{MASK}{_CLOSING.get(quote, quote)}"


def _mask_stated_pin(match: re.Match[str]) -> str:
    """A PIN stated, "my PIN is 4821": digits alone."""
    value = match.group("quoted") if match.group("quote") is not None else match.group("bare").rstrip(".,:;!?")
    if not _PIN.fullmatch(value):
        return match.group(0)
    return _stated_masked(match, value)


def _mask_stated_token(match: re.Match[str]) -> str:
    """A token stated, "my token is x": a token's shape, not a model's ("the token is '<|eos|>'")."""
    value = match.group("quoted") if match.group("quote") is not None else match.group("bare").rstrip(".,:;!?")
    if len(value) < 8 or "|" in value or _SNAKE.fullmatch(value) or _STATED_NAME.fullmatch(value):
        return match.group(0)
    if not _STATED_WORD.fullmatch(value) or _holds_no_secret("", value):
        return match.group(0)
    return _stated_masked(match, value)


def _stated_masked(match: re.Match[str], value: str) -> str:
    """The stated ``value`` masked: inside its quotes, or the word's trailing stop and the words after it kept."""
    lead, quote = match.group(1), match.group("quote")
    if quote is not None:
        return f"{lead}{quote}{MASK}{_CLOSING.get(quote, quote)}"
    return f"{lead}{MASK}{match.group('bare')[len(value) :]}{match.group('words')}"


def _mask_stated_value(match: re.Match[str]) -> str:
    """A password stated after a verb or a label ("the password is x", "password for root: x"): a quoted
    value, a passphrase's words, or one word that looks chosen as one."""
    lead, quote, start = match.group(1), match.group("quote"), match.start()
    if match.group("to") is not None and not _SET_BEFORE.search(match.string, max(0, start - 40), start):
        return match.group(0)  # "the password to the admin panel": set to a value only after a verb
    if (
        match.group("ru_to") is not None
        and match.group("ru_verb") is None
        and not _SET_BEFORE_RU.search(match.string, max(0, start - 40), start)
    ):
        return match.group(0)  # "пароль на вход": "на" sets a password to a value after a verb only
    if quote is not None:
        value = match.group("quoted")
        if _holds_no_secret("", value.strip()) or _STATED_NAME.fullmatch(value.strip()):
            return match.group(0)
        return f"{lead}{quote}{MASK}{_CLOSING.get(quote, quote)}"
    word, words = match.group("bare"), match.group("words")
    least = _passphrase_least(lead)
    if least and (words or least == 1) and (count := _stated_passphrase(match, least=least)):
        return f"{lead}{MASK}{_after_words(match, count)}"
    bare = word.rstrip(".,:;!?")
    # After a label's colon ("password for the admin: Qwerty!") a "!" is read as the value's own, a sign in it
    # (_after_value), as "wifi password: Qwerty!" and "пароль для админки: Qwerty!" take it; after "is" it may
    # end a sentence ("the password is wrong!").
    bangs = len(word) - len(bare) - len(_after_value(word, bare))
    labelled = _LABEL_END.search(lead) is not None
    judged = word[: len(bare) + bangs] if labelled else bare
    if (
        len(bare) < 4
        or _holds_no_secret("", bare)
        or _STATED_NAME.fullmatch(bare)
        or not (_STATED_WORD.fullmatch(judged) or _stated_letters(match, bare, labelled=labelled, bangs=bangs))
    ):
        return match.group(0)
    return f"{lead}{MASK}{_after_value(word, bare)}{words}"


# A label's colon ending a stated secret's lead, maybe in Markdown's emphasis ("**Password for root:**"), maybe
# before a line break, escaped in JSON text too: its value follows.
_LABEL_END = _Lazy(r":\*{0,2}[ \t]*(?:\r?\n|\\+n)?[ \t]*\Z")


# Words that say what a password is like or where it is, not what it is, besides _POINTERS, _NOT_ONE_VALUE,
# _STATED_PROSE and _DETERMINERS: "password for root: blank", "the password is Correct!".
_VERDICTS = frozenset(
    "correct right ok okay good bad weak strong fine blank unset nothing yes no below above here there"
    " mandatory unchanged secret password passwords".split()
)


def _stated_letters(match: re.Match[str], bare: str, *, labelled: bool, bangs: int) -> bool:
    """Whether a word of letters alone (no digit nor sign: _STATED_WORD) stated as a password is one by its
    place or its shape: after a label that names what it opens ("password for root: Qwerty", as "password:
    Qwerty" and the Russian "пароль для root: Qwerty" are masked), alone to its clause's end; after "is" or
    "was", upper and lower case with a "!" after it, as a rule asking for three kinds of character is met
    ("The password for the router is Qwerty!"). Words of prose stay: "password for root: required", "the
    password is Wrong!", "… is on the sticker"."""
    lowered = bare.lower()
    if (
        not bare.isalpha()
        or lowered in _POINTERS
        or lowered in _NOT_ONE_VALUE
        or lowered in _STATED_PROSE
        or lowered in _DETERMINERS
        or lowered in _FIELD_NAMES
        or lowered in _VERDICTS
        or lowered.endswith(("ed", "ing", "ly"))
    ):
        return False
    if labelled:
        return match.group("for") is not None and _STATED_END.match(match.string, match.end("bare")) is not None
    if (dash := _DASH_LEAD.search(match.group(1))) is not None:
        # A dash is a label's (Russian's "is": «пароль от wifi — Qwerty» was kept where a colon masked it): a
        # word alone to its clause's end that is no prose's, a capital inside the sentence or, after a Russian
        # name, a Latin word. A Russian word in lower case may be a verdict («пароль — неверный»): kept.
        russian = dash.group(1)[0] in "Пп"
        return _STATED_END.match(match.string, match.end("bare")) is not None and (
            not bare.islower() or (russian and bare.isascii())
        )
    return bangs > 0 and not bare.islower() and not bare.isupper()


# A stated secret's lead that ends in a dash after the name (not an arrow: "password -> hash" maps a field).
_DASH_LEAD = _Lazy(r"\A([Пп](?i:арол)|(?i:.*pass)).*[ \t][—–-][ \t]+\Z", re.DOTALL)


def _after_value(word: str, bare: str) -> str:
    """What stays of a masked ``word`` after its value ``bare`` (the word without a sentence's marks): the
    marks, but not a "!" right after it, which may be the password's own ("Qwerty1!" meets a rule asking for
    a sign; a sentence's "!" masked is a small loss), as a Russian label's value keeps it (_RUSSIAN_ASSIGNMENT)."""
    tail = word[len(bare) :]
    return tail.lstrip("!")


_STATED_AT = _Lazy(_STATED)


# (what follows a value after a password's name, the mark before it) where the value is set aside:
# in brackets, in apposition (closed by punctuation, or its line's or string's end), after a question.
_ASIDE_CLOSERS = frozenset(
    [
        (")", "("),
        *((c, ",") for c in (",", ".", "!", ";", "", "\n", "\r", "\\", '"')),
        ("", "?"),
        (" ", "?"),
        ("\n", "?"),
    ]
)


def _mask_answer(match: re.Match[str]) -> str:
    """A security question's answer stated ("the security answer is fluffy the cat"): a quoted value, or
    the words up to the clause's end (_STATED_END, a joining word), any words, as an answer is a name or
    a phrase; unless the first is one of prose ("is the name of your first pet", "is case-sensitive",
    "is stored hashed")."""
    lead, quote = match.group(1), match.group("quote")
    if quote is not None:
        return f"{lead}{quote}{MASK}{_CLOSING.get(quote, quote)}"
    first = match.group("bare").rstrip(".,:;!?").lower()
    if (
        not first.replace("-", "").replace("'", "").isalnum()
        or first.split("-")[0] in _STATED_PROSE
        or first in _NOT_ONE_VALUE
        or first in _POINTERS
        or first in _DETERMINERS
        or first.endswith(("ed", "ing", "ly"))
        or _holds_no_secret("", first)
    ):
        return match.group(0)
    words = [match.group("bare"), *match.group("words").split()]
    cut = next((i for i, w in enumerate(words[1:], 1) if w.lower() in _CLAUSE_JOINS), len(words))
    cut = next((i + 1 for i, w in enumerate(words[:cut]) if w[-1] in ".,;!?"), cut)  # a sentence's end
    mark = words[cut - 1][-1] if words[cut - 1][-1] in ".,;!?" else ""
    return f"{lead}{MASK}{mark}{_after_words(match, cut)}"


def _after_escaped_break(text: str, at: int) -> bool:
    """Whether ``at`` follows an escaped line break or tab (``\\n``, ``\\r``, ``\\t``, escaped once or
    more), as a line of a file held in a JSON string starts: "notes\\npassword is x" starts one."""
    return at >= 2 and text[at - 1] in "nrt" and text[at - 2] == "\\"


def _mask_key_shaped(match: re.Match[str]) -> str:
    start = match.start()
    if start and (match.string[start - 1].isalnum() or match.string[start - 1] in "_.-"):
        return match.group(0)  # a name's last word: sort_key, monkey, cache.key (assignments judge names)
    return f"{match.group(1)}{MASK}" if _key_shaped(match.group(2)) else match.group(0)


def _key_shaped(value: str) -> bool:
    """Whether ``value`` has a key's shape, not a name's, a date's or an id's of words: 16 characters or more,
    letters and digits changing from one to the other four times or more, under _MAX_WORDY of it in words
    ("release-notes-2024", "user_profile_2024_v2" stay)."""
    if len(value) < 16 or _SNAKE.fullmatch(value) or _STATED_NAME.fullmatch(value):
        return False
    kinds = [c.isdigit() for c in value if c.isalnum()]
    if sum(a != b for a, b in itertools.pairwise(kinds)) < 4:
        return False
    return sum(len(w) for w in _WORD_AT.findall(value)) < _MAX_WORDY * len(value)


def _mask_all_stated(text: str) -> str:
    """``text`` with every secret stated with "is" masked (_mask_stated). The pattern is tried only
    around its triggers, found in the lower-cased text: over the whole of a long text, its common
    first letters (p, s, a) made it the slowest rule."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter lower-cased into two: offsets differ
        return _STATED_AT.sub(_mask_stated, text)
    starts = sorted(
        {
            max(0, at - 12)  # "access_token is": the name starts before the trigger
            for trigger in _STATED_TRIGGERS
            for at in _occurrences(lowered, trigger)
            if trigger not in _ASIDE_TRIGGERS or _ASIDE_WORTH.match(lowered, at + 8)
        }
    )
    out: list[str] = []
    done = 0
    for start in starts:
        if start + 12 < done:  # its trigger is in the last one; one after it may start a name
            continue
        found = _stated_at(text, max(start, done))
        if found is None:
            continue
        masked, end = _mask_stated(found), found.end()
        words = found.group("words")
        if found.group("plain") is not None and found.group("bare") is not None and masked.endswith(words):
            # its value is one word: the words after it are read for another ("password manager. The password is
            # x"); a passphrase masked ("the passphrase correct horse battery staple") took them
            masked, end = masked[: len(masked) - len(words)], found.end("bare")
        out.append(text[done : found.start()] + masked)
        done = end
    return "".join(out) + text[done:] if out else text


# A password's name then a bracket, a comma or a question mark: tried only where a word with a digit or a sign
# follows ("the password (hunter22x)"), as only such a word is masked there; a list of fields' names
# ("username, password, email" on every line of a file) cost 2.5 times main's without it.
_ASIDE_TRIGGERS = frozenset(("password(", "password,", "password?"))


_ASIDE_WORTH = _Lazy(r"[(?,][ \t]*[^\s(),]*[0-9!@#%^&*+=~]")


# The letters a stated secret's name starts with (each branch of _STATED starts with one of them).
_STATED_FIRST = frozenset("PpSsAaBbTtПпКкСсТтАа")


def _stated_at(text: str, start: int) -> re.Match[str] | None:
    """The first secret stated (_STATED) that starts within 12 characters of ``start``, as
    ``_STATED_AT.search(text, start, start + 1000)`` finds it when it starts there: a search scanned on
    over the 1,000 characters for each trigger that starts none (each "пароль:" of a Russian YAML
    file), tried at each; only the few positions that may start one are tried."""
    for at in range(start, min(start + 13, len(text))):
        if text[at] in _STATED_FIRST and (found := _STATED_AT.match(text, at, start + 1000)) is not None:
            return found
    return None


def _occurrences(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


# What prose says after "the password is" that a passphrase of words would not hold: words of prose
# and pointers (_NOT_ONE_VALUE, _POINTERS), and these.
_STATED_PROSE = frozenset(
    "too very not never always also only still now currently just your my our their his her its same different"
    " case no any all so but as at on valid invalid incorrect wrong until after before during within into"
    " over under about than like because since unless first last default usual original initial plus name"
    " names email birthday".split()
)


# The same in Russian ("пароль — это ключ к аккаунту", "пароль — обязательное поле формы"): words of
# prose, pronouns, and what a description of a password names.
_STATED_PROSE_RU = frozenset(
    "это не ни и или в во на с со к ко от для по у о об обо как что чтобы где когда если то же ли был была"
    " было были есть будет должен должна должно нужно надо можно нельзя мой моя моё мои твой твоя наш наша"
    " ваш ваша его её их тот та этот эта такой такая очень слишком только уже ещё все всё всегда никогда при"
    " из за до после без про через а но да нет вот там тут здесь который которая которое поле параметр"
    " строка значение способ набор комбинация символов символы букв цифр длина пустой пустая обязательный"
    " обязательное обязательная любой любая любое любые произвольный произвольная случайный случайная"
    " сложный сложная простой простая длинный длинная короткий короткая надёжный надёжная слабый слабая".split()
)


# Where a passphrase stated in prose ends: its line's end (of a JSON string's line too), its
# sentence's ("… staple. Then log in"), or a clause's (a comma, a semicolon).
_STATED_END = _Lazy(r"[.!]?(?:[ \t]*(?:\Z|\r|\n|\\+[nr]|\\*\")|[ \t]+[A-ZА-ЯЁ])|[,;](?:\s|\Z)")


# A word that joins a clause to a passphrase stated before it ("… staple and the user is bob").
_CLAUSE_JOINS = frozenset("and but then so or while и а но потом затем или".split())


def _stated_passphrase(match: re.Match[str], *, least: int = 3) -> int:
    """How many of the words stated after a secret's name (its ``bare`` word, then its ``words``) are a
    passphrase ("the wifi password is correct horse battery staple."): ``least`` words of letters or
    more, up to the end of the line, of a sentence or of a clause (a comma, or a word joining another
    clause: "… staple and the user is bob"), none of prose (``_NOT_ONE_VALUE``, ``_POINTERS``,
    ``_STATED_PROSE``, Russian's ``_STATED_PROSE_RU``), the first no participle or adverb ("hashed with
    bcrypt", "rejected for admin site", "limited to 1024 bytes" are prose); 0: no passphrase. A first
    word that is a determiner ("the", "my": _DETERMINERS) is judged with the rest when they are a
    sentence of their own: a capital after "is" ("The password is The cat sat down."), or three words
    more ("my password is my dog has fleas"); "the one from the wiki", "my dog's name" stay."""
    words = [match.group("bare"), *match.group("words").split()]
    lowered = [w.lower() for w in words]
    cut = next((i for i in range(max(least, 1), len(words)) if lowered[i] in _CLAUSE_JOINS), None)
    if cut is not None:
        words, lowered = words[:cut], lowered[:cut]
    elif _STATED_END.match(match.string, match.end()) is None:
        return 0
    return len(words) if _is_passphrase(words, least=least) else 0


def _is_passphrase(words: list[str], *, least: int = 3) -> bool:
    """Whether ``words`` are a passphrase of ``least`` words or more, as _stated_passphrase judges them."""
    if len(words) < least:
        return False
    lowered = [w.lower() for w in words]
    if not all(w.replace("'", "").replace("’", "").replace("-", "").isalpha() for w in lowered):
        return False
    if lowered[0] in _DETERMINERS and len(words) >= (3 if words[0][0].isupper() else 4):
        lowered = lowered[1:]  # "The cat sat down", "my dog has fleas": a sentence chosen as one
    if lowered[0].endswith(("ed", "ing", "ly")):
        return False
    return not any(
        w in _NOT_ONE_VALUE or w in _POINTERS or w in _STATED_PROSE or w in _STATED_PROSE_RU for w in lowered
    )


def _after_words(match: re.Match[str], count: int) -> str:
    """What follows the first ``count`` words stated (its ``bare`` word, then its ``words``)."""
    words = match.group("words")
    if count <= 1:
        return words
    return words[list(re.finditer(r"\S+", words))[count - 2].end() :]


def _passphrase_least(lead: str) -> int:
    """How many words a passphrase stated after ``lead`` (a secret's name, then "is", a dash) holds at
    least: three after a password's or a secret's name (a person's choice), one after a code word's
    ("кодовое слово — синий"); 0: none after a token's, a key's, a PIN's (a machine's, never words)."""
    lowered = lead.lower()
    if "кодов" in lowered:
        return 1
    if ("—" in lowered or "–" in lowered) and ("парол" in lowered or "секрет" in lowered):
        return 2  # "секрет — синий кит": a dash, Russian's "is", states it (a word of prose after it keeps it)
    return 3 if any(word in lowered for word in ("pass", "secret", "парол", "секрет")) else 0


# Words that open a noun's phrase, which a passphrase may start with as prose does.
_DETERMINERS = frozenset("the a an my our your their his her its this that".split())


_REPLACERS = {
    None: _mask_value,
    "labelled": _mask_labelled,
    "user_password": _mask_user_password,
    "named": _mask_named,
    "cookie": _mask_cookies,
    "vault": _mask_vault,
    "netrc": _mask_netrc,
    "htpasswd": _mask_htpasswd,
    "pgpass": _mask_pgpass,
    "short name": _mask_short_name,
    "used as": _mask_used_as,
    "user / password": _mask_user_slash_password,
    "connection": _mask_connection_password,
    "rclone": _mask_rclone,
    "ini pass": _mask_ini_pass,
    "basic auth": _mask_basic_auth,
    "sql password": _mask_sql_password,
    "from literal": _mask_from_literal,
    "value flag": _mask_value_flag,
    "client login": _mask_client_login,
    "httpie": _mask_httpie_auth,
    "netlify": _mask_netlify_env,
    "key shaped": _mask_key_shaped,
}


@functools.lru_cache(maxsize=4096)  # asked of each secret's name two or three times, and a text repeats them
def _name_words(name: str) -> tuple[str, ...]:
    """The words of a secret's name, lower-cased, without qualifiers at its end (``PROD``, ``2``)
    nor ``self``/``this``/``cls`` at its start."""
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    while words and (words[-1] in _QUALIFIERS or words[-1].isdigit()):
        words.pop()
    while words and words[0] in ("self", "this", "cls"):  # self.key is the key
        words.pop(0)
    return tuple(words)


_NAME_WORDS = _Lazy(_NAME_WORD)


@functools.lru_cache(maxsize=4096)  # a text repeats its names (a Ruby hash's keys, XML elements)
def _secret_name(name: str) -> bool:
    """Whether the name of an assignment says its value is a secret (see the docstring)."""
    words = _name_words(name)
    if not words:
        return False
    last = words[-1]
    if last.endswith(_STRONG):
        return True
    if len(words) < 2:
        return False
    if last == "id" and words[-2] == "secret":
        return True  # consul's SecretID, Vault AppRole's secret_id: a credential, not a secret's name
    if last in ("pass", "pwd", "pw"):
        return words[-2] not in _NOT_PASSWORDS
    if last != "key" or words[-2] in _NOT_SECRET_KEYS:
        return False
    return name.isupper() or not _CREDENTIAL_KEYS.isdisjoint(words)


# A secret's name in a secret manager, as AWS's SecretId and --secret-id take it ("prod/db", "MyApp-Prod",
# an ARN): a word of letters, or words joined by AWS's "/_+=.@-", each maybe with digits after its letters
# ("prod/db/v2"). Consul's SecretID and Vault AppRole's secret_id are credentials a machine generates (UUIDs,
# digits before and between letters) or a person chose ("hunter2", one word with a digit): masked.
_STORED_SECRET_NAME = _Lazy(
    r"arn:aws[\w-]*:secretsmanager:[\w-]+:[0-9]+:secret:\S+|[A-Za-z]+"
    r"|[A-Za-z]+[0-9]*(?:[/_+=.@-]+(?:[A-Za-z]+[0-9]*|[0-9]+))+/?"
)


def _names_a_stored_secret(name: str, bare: str) -> bool:
    """Whether ``bare``, assigned to a name ending in "secret id", names a stored secret rather than being a
    credential (_STORED_SECRET_NAME)."""
    return _name_words(name)[-2:] == ("secret", "id") and _STORED_SECRET_NAME.fullmatch(bare) is not None


def _secret_key(name: str) -> bool:
    """Whether a YAML key alone on its line names a secret: an English name (``_secret_name``) or a
    Russian label (``пароль``, ``токен``: ``_RUSSIAN_SECRET``)."""
    return _secret_name(name) or re.fullmatch(_RUSSIAN_SECRET, name, re.IGNORECASE) is not None


@functools.lru_cache(maxsize=4096)
def _chosen_by_a_person(name: str) -> bool:
    """Whether a secret's ``name`` holds what a person chooses, which may be a run of words (a
    password, a passphrase, a secret), not what a machine issues (a token, a key, a credential)."""
    if name.lower().startswith(("парол", "секрет", "кодов")):
        return True
    words = _name_words(name)
    return bool(words) and (
        words[-1].endswith(("password", "passwd", "passphrase", "secret")) or words[-1] in ("pass", "pwd", "pw")
    )


def _is_one_value(words: list[str], *, chosen: bool, name: str = "", below: bool = False) -> bool:
    """Whether the words after a secret's name, to the end of its line, are its value (masked
    whole) rather than prose or code (its first word alone is masked: it may be the secret, as in
    "password: hunter2 and the user is bob").

    Words without one of prose or Python (``_NOT_ONE_VALUE``) are a value. With one, they are code
    when no two operands stand side by side (``token if token is not None else key``, ``str or
    None``); and the value of a name that a machine issues (a token, a key: never a run of words)
    is prose. A person's passphrase may hold such words ("correct horse is battery staple"), so
    after a password's or a secret's name, words are prose only when they are a sentence (a
    capital first, then a full stop or two words of prose) naming a secret (a docstring's "The
    password part of the URL."; "The cat is on the mat." is a passphrase), say where the secret is
    ("see the wiki page", "in the vault": ``_POINTERS``; none of them is masked then) or start with
    a word of the ``name`` they follow, as a description does ("password: password to use with
    username"). Any run of words holding a word of the name is a description (":param password:
    Unicode password."). ``below``: the words are on the lines below the name, where a sentence is
    prose whatever it names (a note's text under its "Secret:" title).
    """
    lowered = [w.lower() for w in words]
    named = _name_words(name)
    if len(lowered) > 1 and any(w.strip(".,:;!?") in named for w in lowered):
        return False  # a description names what it describes (":param password: Unicode password.")
    prose = [w for w in lowered if w in _NOT_ONE_VALUE]
    if not prose:
        return True
    if all(a in _PYTHON_KEYWORDS or b in _PYTHON_KEYWORDS for a, b in itertools.pairwise(lowered)) and (
        not chosen or any(_CODE_OPERAND.search(w) or w in _CODE_WORDS for w in words[1:])
    ):
        return False  # code; words of letters alone after a password's name are words a person chose ("what is love")
    if not chosen or (lowered[0] in _POINTERS and _points_somewhere(words, named)) or lowered[0] in named:
        return False
    sentence = re.fullmatch(r"[A-Z][a-z]*", words[0]) is not None and (
        len(prose) >= 2 or any(re.search(r"[A-Za-z][.?]\Z", w) for w in words)
    )
    # A sentence that names no secret is a passphrase ("password: The cat is on the mat."); a
    # description says what it describes ("The password part of the URL.", "The OAuth client secret.").
    # On the lines below a key (``below``), a sentence is prose still: a note's text under "Secret:".
    return not (sentence and (below or any(_names_a_secret(w, named) for w in lowered)))


# Words after a pointer's first that say where a secret is or what it must be ("in the vault", "see the
# wiki page", "given by the admin"), besides _POINTERS, _SECRET_WORDS and a name's own (_points_somewhere).
_PLACES = frozenset(
    "vault vaults wiki manager keychain keyring file files env environment variable variables var config"
    " configuration settings docs doc documentation readme page notes note ci repo repository folder directory"
    " admin administrator ops team email mail slack chat message above below earlier sticky drawer safe server"
    " console dashboard portal bitwarden lastpass keepass 1password onepassword doppler sops kms ssm store"
    " storage database db characters chars length long short letters digits".split()
)


# A verb of a clause of its own: a pointer's words never hold one ("in the vault", "see the wiki page"), a
# sentence chosen as a passphrase may ("in the beginning was the word").
_CLAUSE_VERBS = frozenset("is was are were am".split())


def _points_somewhere(words: list[str], named: tuple[str, ...]) -> bool:
    """Whether ``words``, the first a pointer's (``_POINTERS``), say where a secret is rather than being
    it: a place, a name (a capital, a digit, a dot: "1Password", "CI", "README.md"), another pointer or a
    word of a secret after the first ("not required for local dev"), or three words at most ("in the
    vault") with no verb of a clause of their own. "password: in the beginning was the word" is a
    passphrase: it was kept whole, as "password: see you later alligator" was."""
    rest = [w.strip(".,:;!?()\"'`") for w in words[1:]]
    for word in rest:
        lowered = word.lower()
        if lowered in _CLAUSE_VERBS:
            continue
        if lowered in _POINTERS or lowered in _PLACES or _names_a_secret(lowered, named):
            return True
        if (word and not word.replace("'", "").replace("-", "").isalpha()) or word != lowered:
            return True
    return len(words) <= 3 and _CLAUSE_VERBS.isdisjoint(w.lower() for w in rest)


def _names_a_secret(word: str, named: tuple[str, ...]) -> bool:
    """Whether a (lower-cased) word of prose names a secret: a word of the name it follows
    (``named``), or a secret's word (password, secrets, token, key, credentials …)."""
    word = word.strip(".,:;!?()\"'`")
    return word in named or word in _SECRET_WORDS or word.removesuffix("s").endswith(_STRONG)


def _runs_to_line_end(sep: str, text: str = "", name_start: int = 0) -> bool:
    """Whether an unquoted value after ``sep`` is the rest of its line (``_MORE_WORDS``): after
    YAML's ``:`` (a quoted name is JSON's or code's), an ``=`` with a space before it, or any ``=``
    in an item of a YAML list whose name starts at ``name_start`` (a compose file's environment:
    ``- DB_PASSWORD=a b``)."""
    stripped = sep.strip(" \t")
    if stripped == ":" or (stripped == "=" and sep[0] in " \t"):
        return True
    if stripped != "=":
        return False
    low = max(0, name_start - 100)
    end, word = _lead_end(text, low, name_start)
    return word == "-" and _breaks_line(text, low, end)


# What _runs_to_line_end looks for before a name: a line's start, then a list's "- " (_lead_end reads it).
_LIST_ITEM = _Lazy(r"(?:^|[\r\n]|\\+n|\\*\")[ \t]*-[ \t]+\Z")


def _lead_end(text: str, low: int, at: int) -> tuple[int, str]:
    """What leads a line up to ``at`` (and no further back than ``low``), read backwards: blanks, and
    before them maybe a list's "-" or "export" and blanks again. (Where it ends: what starts the line
    must end there, the word read: "-", "export" or ""). Each secret's name asked a pattern that
    ends there (_LINE_LEAD, _LIST_ITEM, _ESCAPED_LEAD) to search the 100 characters before it, a
    hundred tries each; this reads the few that lead the line."""
    end = at
    while end > low and text[end - 1] in " \t":
        end -= 1
    if end == at:
        return end, ""
    if end > low and text[end - 1] == "-":
        word, end = "-", end - 1
    elif end - 6 >= low and text.startswith("export", end - 6):
        word, end = "export", end - 6
    else:
        return end, ""
    while end > low and text[end - 1] in " \t":
        end -= 1
    return end, word


def _breaks_line(text: str, low: int, end: int) -> bool:
    """Whether a line starts at ``end`` (no further back than ``low``): the text's start, a line
    break, one escaped in JSON text (a backslash and an "n") or a string's quote ends there."""
    if end == 0:
        return True
    if end == low:
        return False
    last = text[end - 1]
    return last in '\r\n"' or (last == "n" and end - 2 >= low and text[end - 2] == "\\")


def _judged_to_line_end(text: str, start: int, sep: str, value_end: int, name: str, fences: _Fences) -> str | None:
    """Whether the words after the unquoted value of ``name`` (at ``start``) up to the end of its line
    are read as a value of several words (``_MORE_WORDS``, ``_is_one_value``), and how: "line" after
    a separator that runs to the line's end (``_runs_to_line_end``) where the name starts its line,
    and on a .env line, ``NAME=a b c``, unless it is a shell's command (``_runs_a_command``); "prose"
    after a ":" where a password is named in prose ("the wifi password: correct horse battery
    staple", up to a sentence's end); None: its first word alone. ``fences``: the text's code fences."""
    if _runs_to_line_end(sep, text, start):
        if _starts_line(text, start):
            return "line"
        words = _name_words(name) if sep.strip(" \t") == ":" else []
        return "prose" if words and words[-1].endswith(("password", "passwd", "passphrase", "secret")) else None
    if (
        sep.rstrip(" \t") == "="
        and _starts_line(text, start)
        and not _runs_a_command(text, start, value_end, fences)
        and not _asks_after(text, start, value_end, fences)
    ):
        return "line"
    return None


# The first words of a question or a request put to an agent after a NAME=x pasted into it ("password=x what
# did we decide about postgres"), in English and Russian: a run of words a shell would read as a command's.
_ASKING = frozenset(
    "what why how when where who whom whose which did do does can could would should will shall is are was were"
    " has have please tell explain remind что как почему зачем где когда кто какой какая какое какие сколько"
    " можешь можно напомни объясни подскажи расскажи".split()
)


# The verbs among them, which open a question only before its subject ("is it", "can you") or with a "?"
# at the line's end: "PASSWORD=hunter2 is love" may be a passphrase's words.
_AUXILIARIES = frozenset("did do does can could would should will shall is are was were has have".split())


_SUBJECTS = frozenset("i you we it he she they this that there these those my our your its the".split())


# A line of a .env file around a NAME=x line: another NAME=y, an "export", a comment.
_SETTINGS_LINE = _Lazy(r"[ \t]*(?:export[ \t]+)?(?:[A-Za-z_][\w.]*=|#)")


def _asks_after(text: str, name_start: int, value_end: int, fences: _Fences) -> bool:
    """Whether the words after an unquoted ``NAME=x`` starting its line (its first word ending at ``value_end``)
    are a question or a request put to an agent ("password=x what did we decide about postgres"; "… the db?", a
    question's mark after words of prose) rather than the rest of a .env file's value. In a shell's syntax and a
    query string's an unquoted value ends at a blank; python-dotenv and ``docker --env-file`` read one to its line's end, so the words are the
    value's where the line is a settings file's: in a settings code block (```env), or with another
    ``NAME=y``, an ``export`` or a comment on the line above or below it. A question's words masked with a
    password lost a prompt's recall; a passphrase's words ("correct horse battery staple") stay masked."""
    words = _NEXT_WORD.match(text, value_end)
    if words is None:
        return False
    line_end = _LINE_END.search(text, value_end)
    end = line_end.start() if line_end else len(text)
    rest = text[value_end:end].rstrip()
    first = words.group(1).lower()
    if text[name_start:value_end].rpartition("=")[2].lower() in _ASKING:
        return False  # "PASSWORD=what is love": the words read on from the value, a passphrase's, no question after it
    if first in _AUXILIARIES:
        second = _NEXT_WORD.match(text, words.end())
        if not rest.endswith("?") and (second is None or second.group(1).lower() not in _SUBJECTS):
            return False  # "PASSWORD=x is love": a verb after the value opens a question with its subject or a "?"
    elif first not in _ASKING and (not rest.endswith("?") or _is_passphrase(rest.rstrip("?").split(), least=1)):
        return False  # a question's mark after words a passphrase may be ("correct horse battery staple?")
    fence = fences.last_before(name_start)
    if fence >= 0 and (info := _FENCE.match(text, fence)) is not None and info.group(1).lower() in _SETTINGS_FENCES:
        return False
    line_start = _lead_end(text, max(0, name_start - 100), name_start)[0]
    if _after_break(text, line_start):  # the line above, a line of the text or of a JSON string
        low = max(0, line_start - 400)
        raw, escaped = text.rfind("\n", low, line_start - 1), text.rfind("\\n", low, line_start - 2)
        above = max(raw + 1 if raw >= 0 else -1, escaped + 2 if escaped >= 0 else -1, 0 if low == 0 else -1)
        if above >= 0 and _SETTINGS_LINE.match(text, above) is not None:
            return False
    below = _LINE_BREAK_AT.match(text, end)
    return below is None or _SETTINGS_LINE.match(text, below.end()) is None


def _after_break(text: str, at: int) -> bool:
    """Whether a line break, or one escaped in JSON text, ends at ``at``."""
    return at > 0 and (text[at - 1] == "\n" or (at > 1 and text[at - 1] == "n" and text[at - 2] == "\\"))


# A line break, or one escaped in JSON text.
_LINE_BREAK_AT = _Lazy(r"\r?\n|\\+(?:r\\+)?n")


# Words after which "secret" is an adjective, not a secret's name: "have to be secret: they are …".
_ADJECTIVE_BEFORE = _Lazy(r"(?i:\b(?:be|is|are|was|were|been|being|kept|keep|stay|stays|remain|remains|top))[ \t]+\Z")


# Python's condition on a name, before it: "if not token:", "elif api_key:", "while not password:".
_CONDITION_BEFORE = _Lazy(r"(?<![\w.])(?:if|elif|while)[ \t]+(?:not[ \t]+)?\Z")


# The end of a sentence in prose: a full stop, then a capital.
_SENTENCE_END = _Lazy(r"[.!?](?=[ \t]+[A-Z])")


# Words that start a command, so that NAME=x before them sets a variable for it (NAME=x make test):
# the shell's own, interpreters, package managers, build tools, clients of the usual services.
_COMMANDS = frozenset(
    "sudo env exec nohup time nice timeout xargs command bash sh zsh fish source make cmake ninja python python3"
    " py pip pip3 pipx uv uvx poetry pdm hatch pytest tox nox node nodejs npm npx yarn pnpm bun deno tsx ts-node"
    " go cargo rustc ruby bundle rails rake irb php composer java javac mvn gradle gradlew dotnet swift kotlin"
    " docker podman kubectl helm terraform tofu ansible ansible-playbook vagrant aws gcloud az gsutil heroku"
    " flyctl vercel netlify firebase git gh curl wget ssh scp rsync psql pg_dump pg_restore mysql mysqldump"
    " redis-cli mongo mongosh sqlite3 flask django-admin gunicorn uvicorn celery alembic jest vitest mocha"
    " playwright cypress perl lua ruff mypy black brain claude code cat echo printf open".split()
)


# The info string of a Markdown code fence: a shell's session or script, or a .env-like file.
_FENCE = _Lazy(r"```[ \t]*([\w+.-]*)")


_SHELL_FENCES = frozenset("bash sh shell zsh fish ksh console shell-session shellsession terminal sh-session".split())


_SETTINGS_FENCES = frozenset("env dotenv .env ini properties conf cfg config".split())


# A Bash tool's command in a transcript: the JSON string after "command":
_COMMAND_KEY = _Lazy(r"\\*\"command\\*\"[ \t]*:[ \t]*\\*\"\Z")


_NEXT_ASSIGNMENT = _Lazy(r"[ \t]+[A-Za-z_]\w*=[^\s\\]*")


_NEXT_WORD = _Lazy(r"[ \t]+([^\s\\\"']+)")


class _Fences:
    """Where the "```" of a text are (each one, overlapping runs too), found once on the first
    question: looking back to the text's start for each NAME=x line made a .env dump of n lines
    cost n² (2,000 lines 0.3 s, 4,000 lines 1.1 s)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._at: list[int] | None = None

    def last_before(self, end: int) -> int:
        """``text.rfind("```", 0, end)``, by bisection."""
        if self._at is None:
            self._at = list(_occurrences(self._text, "```"))
        i = bisect_right(self._at, end - 3)
        return self._at[i - 1] if i else -1


def _runs_a_command(text: str, name_start: int, value_end: int, fences: _Fences) -> bool:
    """Whether ``NAME=x …`` starting its line at ``name_start`` (its first word ending at ``value_end``)
    sets a variable for a command (``PASSWORD=x make test``) rather than being a .env file's line,
    whose unquoted value runs to the line's end (python-dotenv, docker's --env-file): a known command
    word, a path, a flag or another NAME=y follows, or the line is in a shell's code block
    or a Bash tool's command. In doubt, a setting: a command word masked is a small loss, a password
    left is not."""
    fence = fences.last_before(name_start)
    if fence >= 0 and (info := _FENCE.match(text, fence)) is not None:
        kind = info.group(1).lower()
        if kind in _SETTINGS_FENCES:
            return False
        if kind in _SHELL_FENCES:
            return True
    if name_start and text[name_start - 1] == '"' and _COMMAND_KEY.search(text, max(0, name_start - 40), name_start):
        return True
    if _NEXT_ASSIGNMENT.match(text, value_end) is not None:
        return True  # the shell's NAME=x OTHER=y (each masked as its own when a secret's)
    word = _NEXT_WORD.match(text, value_end)
    if word is None:
        return False
    first = word.group(1)
    if first.lower() in _COMMANDS or "/" in first:
        return True
    line_end = _LINE_END.search(text, word.end())
    rest = text[word.end() : line_end.start() if line_end else len(text)]
    return _FLAG.search(rest) is not None


_FLAG = _Lazy(r"(?:^|\s)--?[A-Za-z]")


_LINE_END = _Lazy(r"\r|\n|\\+[nr]|\\*\"")


def _starts_line(text: str, at: int) -> bool:
    """Whether the name at ``at`` starts its line (after its indentation, a list's "- " or
    "export "), a line of a JSON string too: a YAML, INI or .env line, not prose nor a docstring's
    ":param token: The …" (_MORE_WORDS)."""
    low = max(0, at - 100)
    return _breaks_line(text, low, _lead_end(text, low, at)[0])  # as _LINE_LEAD.search(text, low, at)


# What _starts_line looks for (_lead_end and _breaks_line read it).
_LINE_LEAD = _Lazy(r"(?:^|[\r\n]|\\+n|\\*\")[ \t]*(?:(?:-|export)[ \t]+)?\Z")


def _name_start(text: str, at: int) -> int:
    """Where the name around ``at`` begins: letters, digits, "_", "-", "." (100 at most)."""
    start, low = at, max(0, at - 100)
    while start > low and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    if start < at and start and text[start - 1] == "\\" and text[start] in "nrt":
        # The letter of an escape in JSON text: "\nMAPBOX_KEY=x" was read as "nMAPBOX_KEY", no
        # longer upper case, and its value stayed.
        start += 1
    return start


# What follows a flag in a command or a table and is no value: a shell's operator, a table's bar.
_OPERATORS = frozenset(["|", "||", "&&", ";", ">", ">>", "<", "<<", "&"])


# An option after an option, no value of it: "--force", "--context=x", "-v", "-it" (letters alone: "-hunter2" is one).
_FLAG_WORD = _Lazy(r"--[A-Za-z][\w.-]*(?:=\S*)?|-[A-Za-z]+")


# What goes on after an unquoted value's "&" where a query string's next "name=" would end it (_BARE).
_QUERY_GOES_ON = _Lazy(rf"(?:&(?=(?:amp;)?[\w.\-\[\]%]+=){_BARE})+")


# A shell's here-string, "<<< x": x is what the command reads on its standard input.
_HERE_STRING = _Lazy(rf"<<<[ \t]*(?P<value>{_VALUE})")


# What one name's match comes to: the masks to put in, in order, each (start, end, what replaces
# text[start:end]), and where the search goes on (after the last mask, or short of the value: a secret
# assigned inside a value that is none, sort_key=DB_PASSWORD=x, is still found).
_Masks = tuple[list[tuple[int, int, str]], int]


def _mask_assignments(text: str, compiled: _Lazy) -> str:
    """Mask the values of names that hold a secret; other names are read past, not eaten.

    A name that is no secret (``sort_key=``) gives its value back to the search, so a
    secret assigned inside its value (``sort_key=DB_PASSWORD=x``) is still found.
    """
    out: list[str] = []
    done = pos = 0
    # Asked once of the text, not for each secret: over the whole text each time, a .env dump or a
    # YAML file of n secrets cost n² (4,000 lines of DB_PASSWORD=x y: 3.5 s).
    escaped = "\\n" in text
    fences = _Fences(text)
    while (match := compiled.search(text, pos)) is not None:
        masks, pos = _assignment_masks(text, match, escaped=escaped, fences=fences)
        for mask_start, mask_end, mask in masks:
            out.append(text[done:mask_start] + mask)
            done = mask_end
    return "".join(out) + text[done:] if out else text


def _assignment_masks(text: str, match: re.Match[str], *, escaped: bool, fences: _Fences) -> _Masks:
    """The masks one name's ``match`` asks for: by the value's shape (a shell's default, Python's triple
    quotes, the rest), none when the name holds no secret or what follows it is no value."""
    start = _name_start(text, match.start())
    sep = match.group("sep").replace("*", "")  # "**Password:** x": Markdown's emphasis around the name
    skipped: _Masks = ([], match.end("sep"))  # the search goes on after the separator
    if (found := _assigned_value(text, match, start, sep, escaped=escaped)) is None:
        return skipped
    value_start, value_end, line_end = found
    if sep in (":", ":=") and text[start - 2 : start] == "${":
        return _shell_default_masks(text, value_start, value_end) or skipped
    if (triple := text[value_start : value_start + 3]) in ('"""', "'''"):
        return _triple_quoted_masks(text, value_start, triple) or skipped
    found_masks = _value_masks(
        text, match, start, sep, value_start, value_end, line_end, escaped=escaped, fences=fences
    )
    return found_masks or skipped


def _assigned_value(
    text: str, match: re.Match[str], start: int, sep: str, *, escaped: bool
) -> tuple[int, int, int] | None:
    """Where the value given to the name at ``start`` begins and ends, and where its line ends; None
    when the name holds no secret, or what follows it is no value (a placeholder, a command's output)."""
    if text[start] != "-" and sep.isspace():  # "name value": flags only
        return None
    value_span = _flag_value(text, match) if sep.isspace() else match.span("value")
    if value_span is None:
        return None
    if not _secret_name(text[start : match.end("name")]):  # cached: a text repeats its names
        return None
    if text[start : match.end("name")] == "secret" and _ADJECTIVE_BEFORE.search(text, max(0, start - 20), start):
        return None  # "they do not have to be secret: they are …": the adjective, naming no secret
    if (
        sep.strip(" \t") == ":"
        and "i" in text[max(0, start - 12) : start]
        and _CONDITION_BEFORE.search(text, max(0, start - 12), start)
    ):
        return None  # Python's "if not token: raise …": a condition, its statement no value
    value_start, value_end = value_span
    if "<" in text[value_start : value_start + 4] and _BRACKETED_AT.match(text, value_start):
        return None  # "password: <your password>": a placeholder to fill in
    if text[value_start] in "<`" and _substituted(text, value_start):
        return None  # "password: <%= ENV['X'] %>", "TOKEN=`cat token.txt`": what a template or a shell puts there
    if text[value_start] in "&!" and sep.strip(" \t").endswith(":"):
        if (tagged := _yaml_tagged_value(text, value_start)) is None:
            return None
        value_start, value_end = tagged
    elif text[value_start] == "&":
        return None  # no YAML: a shell's "&"
    line_end = len(text)
    if escaped and (depth := _line_depth(text, start)) > 1:
        # JSON escaped twice over: the value ends at its line's break, which a bare word reads past
        line_end = found.start() if (found := _escaped(depth)[0].search(text, value_start)) else line_end
        if line_end <= value_start:
            return None  # nothing on the key's line: the value is below (_mask_next_line_values)
        value_end = min(value_end, line_end)
    return value_start, value_end, line_end


def _flag_value(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    """The value of a flag given after a space (``--password x``): None when the next word is none."""
    value_span = match.span("value")
    if text.startswith("<<<", value_span[0]):
        # "--with-token <<< x": a here-string, its word the flag's value; "<<<" was masked and x kept
        here = _HERE_STRING.match(text, value_span[0])
        return None if here is None else here.span("value")
    if text[match.start("value") : match.end("value")] in _OPERATORS:
        return None  # "--password | tee", "| --password | The password to use |": no value but a bar
    if text[value_span[0]] == "-" and _FLAG_WORD.fullmatch(text, *value_span):
        return None  # "--secret --force": the next option, no value ("--force" was masked, and a value after it kept)
    return value_span


def _yaml_tagged_value(text: str, value_start: int) -> tuple[int, int] | None:
    """YAML: an anchor and a tag come before the value (secret: &pw !!str x); they were masked as the
    value, or an anchor ended the search, and the value stayed. None: no value on the line (it is
    below: _mask_next_line_values), or a tag that names a secret kept elsewhere."""
    found = _YAML_PROPERTIES.match(text, value_start)
    if found is None or (value := _VALUE_AT.match(text, found.end())) is None:
        return None
    tags = re.findall(r"!([^\s\"',;!]*)", found.group().lower())
    if text[value.start()] not in "|>" and not _REFERENCE_TAGS.isdisjoint(tags):
        return None  # the name of a secret kept elsewhere (password: !secret db_password)
    return value.span()


def _shell_default_masks(text: str, value_start: int, value_end: int) -> _Masks | None:
    """A shell's default, ${DB_PASSWORD:-x}: the operator and the closing brace stay (${X:?message}: no value)."""
    inner = text[value_start:value_end]
    default = inner[: inner.find("}")] if "}" in inner else inner
    op = default[:1] if default[:1] in "-=?+" else ""
    if op == "?" or _holds_no_secret("", default[len(op) :]):
        return None
    return [(value_start + len(op), value_start + len(default), MASK)], value_start + len(default)


def _triple_quoted_masks(text: str, value_start: int, triple: str) -> _Masks | None:
    """Python's triple quotes, read as an empty string and then the value: masked to the closing ones."""
    close = text.find(triple, value_start + 3, value_start + 4096)
    line_end = text.find("\n", value_start)
    inner_end = close if close >= 0 else len(text) if line_end < 0 else line_end  # unclosed: its line
    if inner_end <= value_start + 3:
        return None  # empty
    value_end = inner_end + 3 if close >= 0 else inner_end
    return [(value_start, value_end, f"{triple}{MASK}{triple if close >= 0 else ''}")], value_end


def _value_masks(
    text: str,
    match: re.Match[str],
    start: int,
    sep: str,
    value_start: int,
    value_end: int,
    line_end: int,
    *,
    escaped: bool,
    fences: _Fences,
) -> _Masks | None:
    """The masks of any other value: unquoted or quoted, its line's rest, a YAML block, the lines
    indented under its key. Read past (None, or no masks and the search on after the value) when it
    holds no secret: a template's expression, which secret is meant, a field's name, prose."""
    if text[value_start] == "[" and (listed := _ONE_LISTED.match(text, value_start)) is not None:
        value_start, value_end = listed.span("value")  # password: ['x'], a list of one: its string
    opening, bare, closing = _unquote(text[value_start:value_end])
    if sep.strip() == "<-" and not opening:
        return None  # R's password <- "x"; Haskell's "password <- getLine" binds a result, no value
    if not opening and len(bare) > 2 and bare[0] == bare[-1] == "`":
        if _CODE_VALUE_AT.match(bare, 1):
            return None  # "token: `get_token()` may refresh": code named, as unquoted
        opening, bare, closing = "`", bare[1:-1], "`"  # PASSWORD = `x`: Markdown's code, its backticks kept
    if _holds_no_secret(opening, bare):
        if bare[:1] in "{<%" and _TEMPLATE_VALUE.fullmatch(bare):
            return (
                [],
                value_end,
            )  # a template's expression whole: "{{resolve:secretsmanager:MySecret:…}}" names no value
        return None
    name = text[start : match.end("name")]
    if _names_a_stored_secret(name, bare):
        # AWS's SecretId='prod/db', --secret-id prod/db: which secret, not its value; the search goes on
        # after it, an ARN's "secret:prod/db" whole: no name and value inside it
        return [], value_end
    if closing == "'" and (goes_on := _SHELL_QUOTES_GO_ON.match(text, value_end)) is not None:
        value_end = goes_on.end()  # 'it'\''s': a quote inside a shell's single-quoted value
    if (
        not opening
        and text.startswith("&", value_end)
        and _starts_line(text, start)
        and (text[start - 1 : start] != '"' or name.isupper())
        and (goes_on := _QUERY_GOES_ON.match(text, value_end)) is not None
    ):
        # "PASSWORD=abc&def=1" on a line of its own: a .env value, which python-dotenv reads whole (the
        # "&def=" a query string's next parameter only in a URL or a body, where the name follows "?", "&",
        # or a quote: curl -d "password=x&user=bob"; a JSON string's NAME=x in capitals is a .env line's)
        value_end = goes_on.end()
        bare += text[value_start + len(bare) : value_end]
    if not opening and (block := _yaml_block(text, start, value_start, escaped=escaped)) is not None:
        # "password: |": the secret is on the lines below, the indicator is none.
        line_end, block_end, indent, line_break = block
        return [(line_end, block_end, f"{line_break}{indent}{MASK}")], block_end
    words: list[str] = []
    whole = chosen = took_more = False  # whole: the value is its line's rest, a YAML plain scalar may go on below
    if not opening and (judged := _judged_to_line_end(text, start, sep, value_end, name, fences)):
        chosen = _chosen_by_a_person(name)
        more = _MORE_WORDS.match(text, value_end, line_end)
        more_end = more.end() if more else value_end
        if more and judged == "prose" and (stop := _SENTENCE_END.search(text, value_start, more_end)):
            more_end = max(value_end, stop.end())  # "password: hunter2. Then log in.": a sentence ends it
            more = more if more_end > value_end else None
        words = text[value_start:more_end].split()
        whole = not more or _is_one_value(words, chosen=chosen, name=name)
        took_more = bool(more and whole)
        if took_more:
            value_end = more_end
        elif more and words[0].lower() in _POINTERS:
            return None  # "password: see 1Password": where the secret is, none of it
    if (
        not took_more
        and ((first := bare.lower()) in _FIELD_NAMES or (first in _DETERMINERS and not _chosen_by_a_person(name)))
        and _PROSE_AFTER.match(text, value_end)
    ):
        return None  # "Credentials: username `admin`": a field's name; "token: the key both ends share": prose
    masks = [(value_start, value_end, f"{opening}{MASK}{closing}")]
    if opening in ("'", '"') and not closing and sep.strip(" \t") == ":" and _starts_line(text, start):
        # "password: 'correct\n  horse battery'": a YAML quoted scalar goes on to its quote
        masks += [(below, end, MASK) for below, end in _quoted_lines(text, start, value_end, opening, escaped=escaped)]
    if whole and sep.strip(" \t") == ":":
        # "password: correct\n  horse battery": the lines indented under the key are the value's
        below_lines = _continued(text, start, value_end, name=name, words=words, chosen=chosen, escaped=escaped)
        masks += [(below, end, f"{quote}{MASK}{unquote}") for below, end, quote, unquote in below_lines]
    return masks, masks[-1][1]


# What a template or a shell puts in a value's place, unquoted: ERB's <%= … %>, a command's output in
# backticks (`cat /run/secrets/token`, `pass show db`): a command's word, then its arguments.
_SUBSTITUTED_AT = _Lazy(r"<%[^\n]{0,400}?%>|`(?:sudo[ \t]+)?(?P<command>[\w.-]+)[ \t][^`\n]{0,400}`")


# Commands that print a secret kept elsewhere, besides _COMMANDS.
_SECRET_COMMANDS = frozenset("pass op gpg sops security secret-tool lpass bw keyring vault base64 head tr".split())


def _substituted(text: str, at: int) -> bool:
    """Whether the unquoted value at ``at`` is a template's expression or a command's output (_SUBSTITUTED_AT)."""
    found = _SUBSTITUTED_AT.match(text, at)
    if found is None:
        return False
    command = found.group("command")
    return command is None or command.lower() in _COMMANDS or command.lower() in _SECRET_COMMANDS


# A list of one quoted value after a secret's name (YAML's flow sequence, Python's, JSON's): password: ['x'].
_ONE_LISTED = _Lazy(rf"\[[ \t]*(?P<value>{_quoted(chr(34), 'dq')}|{_quoted(chr(39), 'sq')})[ \t]*,?[ \t]*\]")


# What goes on a shell's single-quoted value: a quote escaped or double-quoted ('it'\''s', 'it'"'"'s,
# in JSON text 'it'\\''s), then the next single-quoted part or a bare word, as often as it comes.
_SHELL_QUOTES_GO_ON = _Lazy(r"(?:(?:\\+'|(?P<q>\\*)\"'(?P=q)\")(?:'[^'\n]*'|[^\s'\"\\;&|<>()]+)?)+")


def _quoted_lines(text: str, name_start: int, value_end: int, quote: str, *, escaped: bool) -> list[tuple[int, int]]:
    """The lines of a YAML quoted scalar that its key's line at ``name_start`` opens and does not
    close (its first line ends at ``value_end``): (start, end) of what each line holds of it, the
    last one up to its closing quote; none when a line that is not indented under the key comes
    first (not YAML: a quote in prose). ``escaped``: the text holds an escaped line break."""
    depth = _line_depth(text, name_start) if escaped else 0
    if not (_BREAK.match(text, value_end) if not depth else _escaped(depth)[0].match(text, value_end)):
        return []
    column = _key_column(text, name_start, depth=depth)
    closing = re.compile(r"(?<!')'(?!')" if quote == "'" else r'(?<!\\)"')
    found: list[tuple[int, int]] = []
    for lead, start, end in _lines(text, value_end, depth=depth):
        if len(found) >= 100:
            break
        content = text[start:end]
        if not content.strip():
            continue  # a blank line is a line break of the value
        if len(lead.expandtabs()) <= column:
            return []
        if (close := closing.search(content)) is not None:
            if close.start():
                found.append((start, start + close.start()))
            break
        found.append((start, end))
    return found


def _continued(
    text: str, name_start: int, value_end: int, *, name: str, words: list[str], chosen: bool, escaped: bool
) -> list[tuple[int, int, str, str]]:
    """The lines that go on a YAML plain scalar ending its key's line at ``value_end`` (as
    ``_value_lines`` gives them): none when a comment or anything else follows it on the line.
    ``escaped``: the text holds an escaped line break."""
    depth = _line_depth(text, name_start) if escaped else 0
    after = _BLANKS.match(text, value_end)
    pos = after.end() if after else value_end
    if not (_BREAK.match(text, pos) if not depth else _escaped(depth)[0].match(text, pos)):
        return []
    column = _key_column(text, name_start, depth=depth)
    return _value_lines(text, pos, depth=depth, column=column, name=name, chosen=chosen, before=words)


# A YAML block scalar's indicator (literal or folded, maybe an indentation and a chomping
# sign), then nothing on its line but a comment; and each line after it.
_BLANKS = _Lazy(r"[ \t]*")


_BREAK = _Lazy(r"\r?\n")


_BLOCK_HEADER = _Lazy(r"[|>](?:[1-9][+-]?|[+-][1-9]?)?[ \t]*(?:#[^\n]*)?(?=\r?\n)")


_BLOCK_LINE = _Lazy(r"\r?\n([ \t]*)([^\n]*)")
# The same in JSON text, where a file is one string and its lines end at escaped breaks, as a
# transcript holds a tool's input or output: "password: |\n  x\n" masked the "|" and kept the
# secret, and the value on the line below "password:" stayed. A line there also ends at the
# string's closing quote. JSON held in a JSON string (a tool's output quoted again) is escaped twice:
# its line breaks are "\\n" and its strings' quotes \", and a file in it was read as one line
# ("password: x\\nuser: bob" masked "x\\nuser:"; "password:\\n  x" masked the "\\n", kept x).
# Escaped ``depth`` times over (1, 2, 4, …: a break's run of backslashes), a break is a run of
# ``depth`` backslashes and an "n", maybe an escaped "r" before it, after escaped backslashes (runs
# of 2 × depth); a quote ends the string after ``depth - 1`` of them.


def _depth_of_run(run: int) -> int:
    """How deep a run of ``run`` backslashes before an escaped character is escaped: the lowest
    bit of the run (1, 3: once; 2, 6: twice; 4: three times), as escaped backslashes come in pairs."""
    return run & -run


@functools.lru_cache(maxsize=8)
def _escaped(depth: int) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a line break, a block scalar's header, a line after a break) in JSON text escaped
    ``depth`` times over."""
    pairs = rf"(?:\\{{{2 * depth}}})*"
    brk = rf"(?<!\\){pairs}\\{{{depth}}}(?:r{pairs}\\{{{depth}}})?n"
    # A line's text: characters, and runs of backslashes with what they escape, up to a break or
    # the string's end (its quote, or a plain one: the end of an enclosing string).
    rest = rf"(?:(?!{brk})(?!{pairs}\\{{{depth - 1}}}\")(?:[^\n\"\\]|\\+[^\n\\]))*"
    return (
        re.compile(brk),
        re.compile(rf"[|>](?:[1-9][+-]?|[+-][1-9]?)?[ \t]*(?:#{rest})?(?={brk})"),
        re.compile(rf"({brk})([ \t]*)({rest})"),
    )


# Where a line of JSON text starts: after an escaped break (its run) or its string's quote.
# What _line_depth looks for (_lead_end reads it).
_ESCAPED_LEAD = _Lazy(r"(?:(?P<run>\\+)n|(?P<quote>\\*)\")[ \t]*(?:(?:-|export)[ \t]+)?\Z")


def _line_depth(text: str, at: int) -> int:
    """How deep the JSON text is escaped whose line starts before the name at ``at`` (after its
    indentation): 0 when the line starts after no escaped break nor quote."""
    low = max(0, at - 100)
    end = _lead_end(text, low, at)[0]  # as _ESCAPED_LEAD.search(text, low, at), read backwards
    if end == low or text[end - 1] not in 'n"':
        return 0
    last = end - 1
    run = last
    while run > low and text[run - 1] == "\\":
        run -= 1
    if text[last] == '"':
        return _depth_of_run(last - run + 1)
    return _depth_of_run(last - run) if run < last else 0


def _lines(text: str, pos: int, *, depth: int) -> Iterator[tuple[str, int, int]]:
    """The lines after the line break at ``pos``, one after another: (the line's indentation,
    where its text starts, where it ends: a "\r" before the next break is not the line's).
    ``depth``: the breaks are escaped ones, in JSON text escaped that many times over (0: none)."""
    if not depth:
        for line in _BLOCK_LINE.finditer(text, pos):
            yield line.group(1), line.start(2), line.end() - line.group(2).endswith("\r")
        return
    for line in _escaped(depth)[2].finditer(text, pos):
        if line.start() != pos:
            return  # the string ended (its quote), or a line break not escaped came first
        yield line.group(2), line.start(3), line.end()
        pos = line.end()


def _key_column(text: str, name_start: int, *, depth: int) -> int:
    """The column of the key at ``name_start`` on its line (after its indentation and a list's
    "- "); ``depth``: its line is one of JSON text escaped that many times over (0: none)."""
    if depth:  # the key's line starts after a break escaped or the string's quote: its lead alone
        # r"[ \t]*(?:-[ \t]+)?\Z" searched in the 200 characters before, read backwards
        low = max(0, name_start - 200)
        end = name_start
        while end > low and text[end - 1] in " \t":
            end -= 1
        if low < end < name_start and text[end - 1] == "-":
            end -= 1
            while end > low and text[end - 1] in " \t":
                end -= 1
        return len(text[end:name_start].expandtabs())
    return name_start - (text.rfind("\n", 0, name_start) + 1)


def _yaml_block(text: str, name_start: int, value_start: int, *, escaped: bool) -> tuple[int, int, str, str] | None:
    """The block scalar whose indicator starts at ``value_start``, its key at ``name_start``:
    (the end of the indicator's line, the end of the block's last line, its indentation, the
    line break that ends the indicator's line); None when no line indented more than the key
    follows. ``escaped``: the text holds an escaped line break."""
    depth = 0
    header = _BLOCK_HEADER.match(text, value_start)
    if header is None and escaped:
        depth = _line_depth(text, name_start) or 1
        header = _escaped(depth)[1].match(text, value_start)
    if header is None:
        return None
    column = _key_column(text, name_start, depth=depth)
    if depth:
        found = _escaped(depth)[0].match(text, header.end())
        line_break = found.group() if found else "\\n"
    else:
        line_break = "\r\n" if text.startswith("\r", header.end()) else "\n"  # after a comment, its "\r" is in it
    block_end, indent = None, ""
    for lead, start, end in _lines(text, header.end(), depth=depth):
        if not text[start:end].strip():
            continue  # a blank line is the block's when a line of it follows
        if len(lead.expandtabs()) <= column:
            break
        if block_end is None:
            indent = lead
        block_end = end
    return None if block_end is None else (header.end(), block_end, indent, line_break)


# A YAML key with nothing after its ":" on its line but an anchor, a tag or a comment (a list
# item's key too), holding ``hint``, a word of a secret's name (English, or a Russian label's: each
# set of patterns runs when its words occur, so English text does not pay for the Russian ones):
# its value, if any, is on the lines below (_mask_next_line_values).
def _key_alone(hint: str) -> str:
    return (
        rf"(?m)^(?P<lead>[ \t]*(?:-[ \t]+)?)\*{{0,2}}(?P<q>[\"']?)(?P<name>[\w.\-]{{0,60}}?{hint}[\w.\-]{{0,60}})(?P=q)"
        r"(?:\*{1,2}(?=[ \t]*:))?[ \t]*:(?:\*{1,2})?(?:[ \t]+[&!][^\s\"',;]*){0,2}[ \t]*(?:#[^\n]*)?(?=\r?\n)"
    )


# The same in JSON text: after a line break escaped, or at the start of the string (taken, not
# looked behind for: a pattern that starts with a look-behind is tried at every character, and so
# is one whose every branch does not start with a character: "\\+n" tripled the time); the break
# after it must be of the same depth (_mask_values_below).
def _escaped_key_alone(hint: str) -> str:
    return (
        r"(?:\\\\*n|\\\\*\"|\")(?P<lead>[ \t]*(?:-[ \t]+)?)\*{0,2}(?P<q>(?:\\+[\"'])?)"
        rf"(?P<name>[\w.\-]{{0,60}}?{hint}[\w.\-]{{0,60}})(?P=q)"
        r"(?:\*{1,2}(?=[ \t]*:))?[ \t]*:(?:\*{1,2})?(?:[ \t]+[&!][^\s\"',;\\]*){0,2}[ \t]*(?:#[^\n\"]*?)?(?<!\\)(?=(?P<run>\\+)(?:r\\+)?n)"
    )


_RUSSIAN_HINT = r"(?i:парол|токен|секрет)"


# A table's name of a secret, in English or Russian (_mask_tables runs only where one occurs).
_TABLE_HINT = _Lazy(r"(?i:pass|pw|secret|token|key|credential|парол|токен|секрет|ключ)")


_KEYS_ALONE = {
    False: (_Lazy(_key_alone(_HINT)), _Lazy(_escaped_key_alone(_HINT))),
    True: (_Lazy(_key_alone(_RUSSIAN_HINT)), _Lazy(_escaped_key_alone(_RUSSIAN_HINT))),
}


# A line of a plain or quoted scalar that may be a secret: a quoted one, or words (no "key:", no "- "
# first, no "#" after a space: a comment may follow the value).
_PLAIN_WORD = r"[^\s:]+(?::[^\s:]+)*"


_SCALAR_LINE = _Lazy(
    rf"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|(?![-#&*!|>%@`\[{{]){_PLAIN_WORD}(?P<more>(?:[ \t]+(?!#){_PLAIN_WORD})*))"
    r"(?:[ \t]+#.*)?[ \t]*"
)


def _mask_next_line_values(text: str, *, russian: bool = False) -> str:
    """Mask a secret's YAML value written on the lines below its key ("password:", then the
    value indented more than the key): each line so indented that holds it (_value_lines), up to
    the first other. A mapping or a list there ("password:" then "  min_length: 8") is no value.
    ``russian``: the keys are Russian labels (пароль:), else English names."""
    raw, escaped = _KEYS_ALONE[russian]
    text = _mask_values_below(text, raw, escaped=False)
    if "\\n" in text:  # a break escaped however deep ends in a backslash and an "n"
        text = _mask_values_below(text, escaped, escaped=True)
    return text


def _mask_values_below(text: str, keys: _Lazy, *, escaped: bool) -> str:
    out: list[str] = []
    done = 0
    for key in keys.finditer(text):
        if key.start("lead") < done or not _secret_key(key.group("name")):
            continue
        depth = 0
        if escaped:
            depth = _line_depth(text, key.end("lead"))
            if not depth or _depth_of_run(len(key.group("run"))) != depth:
                continue  # "C:\\npassword:\n": a backslash and an "n" before it, a break after
        column = len(key.group("lead").expandtabs())
        chosen = _chosen_by_a_person(key.group("name"))
        for start, end, opening, closing in _value_lines(
            text, key.end(), depth=depth, column=column, name=key.group("name"), chosen=chosen
        ):
            out.append(text[done:start] + f"{opening}{MASK}{closing}")
            done = end
    return "".join(out) + text[done:] if out else text


def _value_lines(
    text: str, pos: int, *, depth: int, column: int, name: str, chosen: bool, before: list[str] | None = None
) -> list[tuple[int, int, str, str]]:
    """The lines after the line break at ``pos`` that hold a secret's value, indented more than
    ``column`` (its key's): (where its value starts, where it ends, its quotes), up to the first
    line that is none: a mapping, a list, prose (a line of several words is a value when a person
    chose it, ``chosen``, and ``_is_one_value`` says so of the value's words so far: a token or a
    key is never a run of words). ``before``: the words of the value on its key's line, which these
    lines go on (a docstring's "password: Password\\n    for the account." is a sentence); None:
    the value starts below its key, after blank lines maybe."""
    found: list[tuple[int, int, str, str]] = []
    words = list(before or [])
    for lead, start, end in _lines(text, pos, depth=depth):
        content = text[start:end]
        if not content.strip():
            if before is None and not found:
                continue  # blank lines before the value
            break
        # A value pasted from a password manager is not indented: "Password:" then "hunter2x" below it, one
        # word as the key's own line takes one (a sentence, "The policy says …", or a mapping stays).
        flush = before is None and not found and len(lead.expandtabs()) == column
        if len(lead.expandtabs()) <= column and not flush:
            break  # (asked first: the next key's line, or prose's, is the most common, and costs no match)
        if flush and content[:1] in "*`" and (marked := _MARKED_WORD.fullmatch(content)) is not None:
            # Markdown's emphasis or code around a value pasted below its label ("Password:\n**hunter2**"): a
            # YAML alias's "*" or a backtick starts no plain scalar, and the value stayed
            value = marked.group("value")
            if _holds_no_secret("", value):
                break
            mark = "`" if marked.group("mark") == "`" else ""
            found.append((start, start + marked.end("value") + len(marked.group("mark")), mark, mark))
            break
        line = _SCALAR_LINE.fullmatch(content)
        if line is None or (flush and line.group("more")):
            break
        value = line.group("value")
        opening, bare, closing = _unquote(value)
        if _holds_no_secret(opening, bare):
            break
        if not opening and before is None and not found and _points_below(value.split()):
            break  # "пароль:\n  в сейфе": where it is, as on the label's line
        words += value.split()
        judged = line.group("more") or (before is not None and chosen)
        if judged and not (chosen and _is_one_value(words, chosen=True, name=name, below=True)):
            break
        found.append((start, start + line.end("value"), opening, closing))
    return found


# One word in Markdown's emphasis or code on its line, a comment maybe after it: "**hunter2**", "`hunter2`".
_MARKED_WORD = _Lazy(r"(?P<mark>\*{1,3}|`)(?P<value>[^\s*`]{1,200})(?P=mark)(?:[ \t]+#.*)?[ \t]*")


def _points_below(words: list[str]) -> bool:
    """Whether the first line of a Russian label's value below it says where the secret is, or that there
    is none, as the same words on the label's line do (_mask_labelled): a pointer's word, then more ("в
    сейфе"; a verb of a clause makes it a passphrase: "в начале было слово"). English ones are judged by
    _is_one_value (_points_somewhere)."""
    return len(words) > 1 and words[0].lower() in _POINTERS_RU and _CLAUSE_VERBS_RU.isdisjoint(w.lower() for w in words)


# A Markdown table's delimiter row (``|---|:--|``), found by a dash beside a pipe (a literal: fast),
# then read whole on its line; a line of a JSON string too, its breaks escaped.
_TABLE_DASH = _Lazy(r"\|[ \t]*:?-|-:?[ \t]*\|")


_TABLE_RULE = _Lazy(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*")


# A break between a table's lines: a line break, or one escaped in JSON text.
_TABLE_BREAK = _Lazy(r"\r?\n|(?<!\\)\\(?:r\\)?n")


# Cells that say nothing of a secret: a dash, yes or no, a tick.
_EMPTY_CELLS = frozenset("- — – n/a na yes no y n x ✓ ✔ ✗ ✘ ? tbd todo same".split())


# The header of a table's second column that says what its first column's rows are, or how they
# fared, not their values: "| DB_PASSWORD | database password |" under "Purpose", "| test_login_password
# | FAIL |" under "Result" stay.
_DESCRIBING_HEADERS = frozenset(
    "description descriptions purpose meaning notes note comment comments usage use what why"
    " result results status outcome explanation details".split()
) | {"used for", "what it is", "what for"}


def _table_lines(text: str, at: int) -> tuple[int, int]:
    """(start, end) of the table line around ``at``: between breaks (``_TABLE_BREAK``); (at, at) for
    a line of over 2,000 characters before ``at``: no table's."""
    low = max(0, at - 2000)
    plain, escaped = text.rfind("\n", low, at), text.rfind("\\n", low, at)
    if plain < 0 and escaped < 0 and low:
        return at, at
    start = max(plain + 1, escaped + 2 if escaped >= 0 else 0)
    end = _TABLE_BREAK.search(text, at)
    return start, end.start() if end else len(text)


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cells of the table row at ``text[start:end]``: (start, end) of each one's text, stripped;
    what comes before a leading pipe or after a trailing one (nothing, or a JSON string's quote) is
    no cell."""
    bounds = [start - 1, *(pipe.start() for pipe in _PIPE.finditer(text, start, end)), end]
    spans = []
    for left, right in itertools.pairwise(bounds):
        cell = text[left + 1 : right]
        lead = len(cell) - len(cell.lstrip())
        spans.append((left + 1 + lead, left + 1 + len(cell.rstrip())))
    if len(spans) > 1 and _NO_CELL.fullmatch(text, start, bounds[1]):
        spans.pop(0)
    if len(spans) > 1 and _NO_CELL.fullmatch(text, bounds[-2] + 1, end):
        spans.pop()
    return spans


_PIPE = _Lazy(r"(?<!\\)\|")


# Markdown's emphasis and code around a table's name of a secret (``**Password**``).
_MARKUP = _Lazy(r"[*_`]")


# What stands before a row's leading pipe or after its trailing one: spaces, a JSON string's quote.
_NO_CELL = _Lazy(r"[ \t]*(?:\\*\"[ \t]*)?")


def _mask_tables(text: str) -> str:
    """Mask a secret in a Markdown table: each cell of a column whose header names one (``| service |
    password |``), and, in a table of two columns, the cell after one naming a secret (``| wifi
    password | x |``), judged as a value after its name is (``_is_one_value``): a description, a
    pointer, a literal or a dash stays."""
    masks: list[tuple[int, int, str]] = []
    pos = 0
    while (dash := _TABLE_DASH.search(text, pos)) is not None:
        rule_start, rule_end = _table_lines(text, dash.start())
        pos = max(rule_end, dash.end())
        if rule_start == 0 or not _TABLE_RULE.fullmatch(text, rule_start, rule_end):
            continue
        columns = len(_cells(text, rule_start, rule_end))
        above = [b for b in _TABLE_BREAK.finditer(text, max(0, rule_start - 4), rule_start) if b.end() == rule_start]
        if not above:
            continue
        header_start, header_end = _table_lines(text, above[-1].start())
        header = [text[a:b] for a, b in _cells(text, header_start, header_end)]
        if len(header) != columns:
            continue
        names = [_MARKUP.sub("", name).strip() for name in header]
        secret = [bool(name) and _secret_key(name) for name in names]
        judged = columns == 2 or any(secret)  # else no column of a secret, nor a row's name beside its value
        # "| Env var | Purpose |", "| Test | Result |": the second column says of the first, holds no value
        described = columns == 2 and names[1].lower() in _DESCRIBING_HEADERS
        # "| Secret | Value |": the column of a secret's name names it, its value is in the other one
        valued = [any(secret) and not secret[i] and name.lower() in _VALUE_HEADERS for i, name in enumerate(names)]
        value_of = ""
        if any(valued):
            value_of = names[secret.index(True)]
            secret = [False] * columns
        row_end = rule_end
        while (brk := _TABLE_BREAK.match(text, row_end)) is not None:
            row_start = brk.end()
            found = _TABLE_BREAK.search(text, row_start)
            row_end = found.start() if found else len(text)
            if row_end <= row_start or "|" not in text[row_start:row_end]:
                break
            if not judged:
                continue
            cells = _cells(text, row_start, row_end)[:columns]
            if columns == 2 and not secret[1] and not described and len(cells) == 2:
                first = _MARKUP.sub("", text[cells[0][0] : cells[0][1]]).strip()
                if first and _secret_key(first) and _is_table_secret(text[cells[1][0] : cells[1][1]], first):
                    masks.append((*cells[1], text[cells[1][0] : cells[1][1]]))  # "| wifi password | x |"
            for i, (a, b) in enumerate(cells):
                of = value_of if valued[i] else names[i] if secret[i] else None
                if (
                    of is not None
                    and _is_table_secret(text[a:b], of)
                    and (valued[i] or not _names_its_secret(text[a:b], of))
                ):
                    masks.append((a, b, text[a:b]))
        pos = max(pos, row_end)
    if not masks:
        return text
    out: list[str] = []
    done = 0
    for a, b, cell in sorted(masks):
        opening, _, closing = _unquote_cell(cell)
        out.append(text[done:a] + f"{opening}{MASK}{closing}")
        done = b
    return "".join(out) + text[done:]


# The header of a table's column of values, beside one naming its secrets ("| Secret | Value |").
_VALUE_HEADERS = frozenset("value values значение значения".split())


# A secret's name in a table's cell, as a vault, a cloud's secret manager or an environment names it
# ("kms-key-prod", "prod/db/api", "STRIPE_SECRET_KEY"): words of one case, maybe a few digits after
# each, joined by "-", "_", ".", "/" or ":". A value mixes them ("a1b2-c3d4", "Zx9q!wer").
_SECRET_NAME_CELL = _Lazy(
    r"(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)[0-9]{0,4}(?:[-_./:](?:(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)[0-9]{0,4}|[0-9]{1,4}))+"
)


def _names_its_secret(cell: str, header: str) -> bool:
    """Whether a table's cell under ``header``, a secret a machine issues (a secret, a token, a key:
    not a person's password), names that secret rather than being it: "| Secret | Rotation |" above
    "| kms-key-prod | 90 days |" lists the secrets a team keeps."""
    words = _name_words(header)
    if not words or words[-1].endswith(("password", "passwd", "passphrase")) or words[-1] in ("pass", "pwd", "pw"):
        return False
    _, bare, _ = _unquote_cell(cell.strip())
    return _SECRET_NAME_CELL.fullmatch(bare.strip()) is not None


def _unquote_cell(cell: str) -> tuple[str, str, str]:
    """A table cell as (opening, inside, closing): backticks or quotes around it stay."""
    found = re.fullmatch(r"(`+|\\*[\"'])(.+)(\1)", cell)
    return (found.group(1), found.group(2), found.group(3)) if found else ("", cell, "")


def _is_table_secret(cell: str, name: str) -> bool:
    """Whether a table's cell under (or beside) a secret's ``name`` holds the secret."""
    _, bare, _ = _unquote_cell(cell)
    bare = bare.strip()
    if not bare or bare.lower() in _EMPTY_CELLS or _holds_no_secret("", bare) or bare.strip(":-") == "":
        return False
    words = [w.strip(".,;:!?") or w for w in bare.split()]
    if re.sub(r"[`*_()\[\]]", "", words[0]).lower() in _EMPTY_CELLS:
        return False  # a column of ticks ("YES (P)", "NO`*`": which extensions hold a password)
    named = _name_words(name)
    if words[0].lower() in _POINTERS and _points_somewhere(words, named):
        return False
    return len(words) == 1 or _is_one_value(words, chosen=_chosen_by_a_person(name), name=name)


# A private key's body without its BEGIN line (a text that starts inside the key): the
# base64 lines just before an END line.
_PEM_END = r"-----END ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"


_BASE64_LINE = r"[A-Za-z0-9+/=]+"


# Long tokens: runs of base64 (and base64url) characters. A run right after a "." with a
# "/" in it is the path of a URL ("github.com/…"), not a token.
_TOKEN = r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{40,}"


_TOKEN_AT = _Lazy(_TOKEN)


# Words of a name, and numbers standing alone between its separators (a dated note's
# "2024-01-01-MeetingWith…": the numbers of a date are no key material).
_WORD = r"[A-Z]?[a-z]{3,}|[A-Z]{3,}(?![a-z])|(?<![A-Za-z0-9])[0-9]+(?![A-Za-z0-9])"


_WORD_AT = _Lazy(_WORD)


# Thresholds measured on random keys (40 characters of base64: ~0.2% missed, none from 64
# characters on) against the paths, URLs, identifiers and hashes of two real vaults, real
# transcripts and Python packages (none masked): see tests/test_hardening_ledger.py.
_MAX_WORDY = 0.7  # share of the token in words ("Button", "components", "SQL")


_MIN_ENTROPY = 4.2  # bits per character


_MIN_SWITCHES = 0.3  # changes between upper case, lower case and digits, per character


_SAMPLE = 512


def _looks_random(token: str) -> bool:
    """Whether ``token`` has the shape of key material rather than of a name or a path."""
    if len(token) > 2 * _SAMPLE:  # judge a long run by its two ends, at a fixed cost
        return _looks_random(token[:_SAMPLE]) or _looks_random(token[-_SAMPLE:])
    if token.islower() or token.isupper() or not any(c.isdigit() for c in token):
        return False  # hex digests, commit ids, CONSTANT_NAMES: one case only, or no digit
    if sum(len(w) for w in _WORD_AT.findall(token)) >= _MAX_WORDY * len(token):
        return False
    counts: dict[str, int] = {}
    for c in token:
        counts[c] = counts.get(c, 0) + 1
    n = len(token)
    entropy = -sum(k / n * math.log2(k / n) for k in counts.values())
    if entropy < _MIN_ENTROPY:
        return False
    switches = letters = 0
    for segment in re.findall(r"[A-Za-z0-9]+", token):
        letters += len(segment)
        kinds = [0 if c.isupper() else 1 if c.islower() else 2 for c in segment]
        switches += sum(a != b for a, b in itertools.pairwise(kinds))
    return switches >= _MIN_SWITCHES * letters


def _mask_token(match: re.Match[str]) -> str:
    token = match.group(0)
    before = match.string[match.start() - 1] if match.start() else ""
    if before == "." and "/" in token:
        return token
    if token.startswith(("pk_live_", "pk_test_")):  # Stripe's publishable keys are public: they stay
        return token
    return MASK if _looks_random(token) else token


def _mask_pem_bodies(text: str) -> str:
    """Mask the base64 lines right before each private key's END line."""
    out: list[str] = []
    done = 0  # text before this offset is settled
    for end in re.finditer(_PEM_END, text):
        start = end.start()
        first = start  # the first body line found so far
        while first > done and text[first - 1] == "\n":
            line_start = text.rfind("\n", done, first - 1) + 1 or done
            line = text[line_start : first - 1].rstrip("\r")
            if not line or not re.fullmatch(_BASE64_LINE, line):
                break
            first = line_start
        if first < start:
            out.append(text[done:first] + MASK + "\n")
            done = start
    return "".join(out) + text[done:] if out else text


# What every long token (_TOKEN) holds: 40 of its characters in a row.
_TOKEN_RUN = _Lazy(r"[A-Za-z0-9+/=_\-]{40}")
