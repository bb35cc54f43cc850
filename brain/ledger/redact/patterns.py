"""The masker's catalogue: _RULES, each rule's triggers, pattern and replacement in the order they
run, the fragments and the word lists they are built of, and _Lazy, which compiles a pattern where
it is first used (both hooks import the masker on every call)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

MASK = "***"


def _atomic(body: str, name: str) -> str:
    """``body`` as an atomic group: once it has matched, what follows never makes it give back a
    character. Python 3.10's re has no atomic group (nor a possessive ``*+``: "unknown extension",
    "multiple repeat", and every text that asked for the rule raised there); a lookahead is atomic on
    every version, and a reference to what it took consumes exactly that: the same matches, with one
    group more (``name``, unique in its pattern), so a rule that holds one reads its groups by name, or
    by number only before it (tests/test_python_versions.py)."""
    if sys.version_info >= (3, 11):
        return f"(?>{body})"
    return f"(?=(?P<{name}>{body}))(?P={name})"


class _Lazy:
    """A regular expression compiled where it is first used, not on import: both hooks import the
    masker on every call, and the ~70 patterns below compiled there were most of the import's CPU
    (brain.text's LazyPattern is the same idea; this module imports the standard library only, so
    bench/mask_compare.py can load another checkout's copy of it alone). The first use of a method
    compiles the pattern and binds the compiled pattern's methods to this object, so each later call
    is the compiled pattern's own, with no step between."""

    search: Callable[..., re.Match[str] | None]
    match: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]
    finditer: Callable[..., Iterator[re.Match[str]]]
    findall: Callable[..., list[Any]]
    sub: Callable[..., str]

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str) -> Any:
        # Only what is not set yet comes here: the methods, before the first use.
        compiled = re.compile(self.pattern, self.flags)
        for method in ("search", "match", "fullmatch", "finditer", "findall", "sub"):
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def _quoted(quote: str, group: str) -> str:
    """A value in ``quote``s, the quotes maybe backslash-escaped (``\\"x\\"`` in a JSON string).

    It ends at the same quote with as many backslashes, on the same line; inside it, a
    quote with any other number of them is a character (``"a \\" b"``). Each backslash
    run is read whole, so a value that does not end is given up at a cost linear in its
    length.
    """
    return (
        rf"(?P<{group}>\\*){quote}"
        rf"(?:[^{quote}\\\n]|\\+(?![\\{quote}])|(?!(?P={group}){quote})\\+{quote}){{0,4096}}"
        rf"(?P={group}){quote}"
    )


# A value: quoted (see _quoted; bash's $'x' too), else a bare word, its quote maybe never
# closed (PASSWORD="x; a letter or digit must follow that quote, so the end of an enclosing
# string, as in getpass("Password: "), is no value). A bare word stops at a backslash
# before a quote: the end of a string; a backslash before a space escapes it (S3cret\ Pass).
# It stops at a line break escaped too (an odd run of backslashes, then n or r), as in JSON
# text: "DB_PASSWORD=x\nOTHER=1" was masked to the end of its string. A "#" after a space is no
# value but a comment (YAML, shell, .env): "api_token:  # note" had its comment masked.
# An "&" ends it where it ends a URL's query parameter (another "name=" after it, "&amp;" in HTML too:
# "?token=x&user=y", a curl -d body) or is a shell's operator ("&", "&&", "&>", "2>&1" after a blank;
# before a blank, a quote or the end); elsewhere it is the value's (.env's PASSWORD=Tr0ub4dor&3 kept "&3").
_BARE = (
    r"(?:[^\s\"',;&\\]|&(?![\s&;|<>()\\\"'`]|\Z|(?:amp;)?[\w.\-\[\]%]+=)"
    r"|\\[ \t]|(?:\\\\)+(?![\\\"'])|\\(?:\\\\)*(?![\\\"'nr]))+"
)


_VALUE = (
    rf"(?!(?<=[ \t])#)({_quoted(chr(34), 'dq')}|\$?{_quoted(chr(39), 'sq')}"
    rf"|(?:\\*[\"'](?=\w))?{_BARE})"
)


# The words after an unquoted value's first where its syntax makes them one value: YAML's plain
# scalar (key: a b c) and an INI or .env value after " = " run to the end of the line, so
# "password: correct horse battery staple" kept three words of four. They are that only when they
# reach the end of the line (or a " #" comment, or the end of a JSON string or its escaped line), each
# word starting with a letter or a digit: a line where a "key:", a comma, "(", "= Field(…)" comes
# first is code or prose ({token: i for …}, token = x or os.getenv(…)), and its first word alone
# stays the value. So does a .env line's NAME=a b c (python-dotenv, docker's --env-file), unless it is
# a shell's NAME=a running command b (_runs_a_command): one word.
_MORE_WORDS = _Lazy(
    rf"(?:[ \t]+(?=[^\W_]){_atomic(_BARE, 'more_word')}(?<!:))+"
    r"(?=[ \t]+#|[ \t]*(?:\r|\n|\Z)|\\+[nr]|\\*\")"
)


# What marks an operand after the first (the value, which may hold anything) as code, not a word a person
# chose: a name's "_" or ".", a call's or an index's bracket, a quote, a digit, an operator; Python's literals
# and builtin types. "password: what is love" was read as Python's "a is b", and "is love" kept.
_CODE_OPERAND = _Lazy(r"[_.()\[\]{}'\"0-9=<>!|&*+/%-]")


_CODE_WORDS = frozenset("None True False self cls str int bytes bool float dict list tuple set null nil".split())


# Words that may make the rest of a line prose or code, not one value: a sentence ("password: see the
# wiki page", a docstring's "token: The token returned by …"), Python (token = await load(…),
# token = x if y else z). There the first word alone is masked, as a value of one word is. A run of
# words without one is a value; with one, it is still a value when a person chose it (_is_one_value).
_NOT_ONE_VALUE = frozenset(
    "a an the of to for from with by that this which is are was be see used when where"
    " if else or and not in lambda await".split()
)


# Words that name a secret in a description, besides _STRONG's (_names_a_secret).
_SECRET_WORDS = frozenset("pass pwd pw key keys login auth authentication passcode pin".split())


# Python's words between operands: an expression never has two operands side by side.
_PYTHON_KEYWORDS = frozenset("if else or and not is in await lambda for".split())


# First words of a line that says where a secret is, or that there is none, rather than being it
# ("password: see the wiki page", "password: in the vault", "password: not set").
_POINTERS = frozenset(
    "see ask check in stored kept saved from use same set via not none is was unchanged provided"
    " given managed generated found read get taken sent shared required optional empty unknown must should"
    " can will may".split()
)


# Cookies as curl takes them: NAME=VALUE, more after "; ".
_COOKIES = r"[^\s\"';]*=[^\s\"';]*(?:;\s*[^\s\"';]+)*"


# A character of one shell command: not a line break, ";", "|", nor an "&" that is the shell's ("&", "&&",
# "&>", before a blank, a bracket or the end); an "&" inside a word is the command's (a URL's query string,
# "curl 'https://h/?a=1&b=2' -u bob:x", where the password was kept; .env's Tr0ub4dor&3).
_IN_COMMAND = r"(?:[^\n;&|]|&(?![\s&;|<>()]|\Z))"


# The rest of one shell command, shortest first: a client's options up to the password one.
# Bounded, so a text with many client names costs a fixed amount per name.
_SAME_COMMAND = rf"{_IN_COMMAND}{{0,400}}?"


# Space between the words of a file where a line break may come, maybe escaped (JSON text).
_GAP = r"(?:[ \t\r\n]|\\+[nrt])+"


# The clients of a container registry whose "login" takes a password (-p, --password-stdin).
_LOGIN = r"(?:docker|podman|buildah|skopeo|nerdctl|helm\s+registry)"


# Commands that read a token or a secret on stdin, besides a registry login's --password-stdin: gh auth
# login --with-token, gh secret set NAME (without --body or a file), wrangler secret put NAME, gcloud secrets
# create NAME (versions add) --data-file=-, vercel env add NAME.
_STDIN_READERS = (
    r"(?:\bgh[ \t]+auth[ \t]+login\b[^\n;&|<]{0,400}?--with-token\b"
    r"|\bgh[ \t]+secret[ \t]+set\b(?![^\n;&|]{0,400}?[ \t](?:--body|-b|--env-file|-f)\b)"
    r"|\b(?:(?:npx|bunx|pnpm|yarn)[ \t]+)?wrangler[ \t]+secret[ \t]+put\b"
    r"|\bgcloud[ \t]+secrets[ \t]+(?:create|versions[ \t]+add)\b|\bvercel[ \t]+env[ \t]+add\b)"
)


# netlify env:set's options before the variable's name, which shift its value ("env:set --context production
# KEY VALUE"): a context's and a scope's (a word, then maybe more of the names they take), the filter's, the site's,
# the auth token's, and the flags that take none (--secret, --force, --json, --debug).
_NETLIFY_OPTIONS = _atomic(
    r"(?:[ \t]+(?:(?:-c|--context)(?:=\S+|[ \t]+[^\s-]\S*(?:[ \t]+(?:production|deploy-preview|branch-deploy|dev|all|prod|dp|branch:\S+))*)"
    r"|(?:-s|--scope)(?:=\S+|[ \t]+[^\s-]\S*(?:[ \t]+(?:builds|functions|runtime|post[-_]processing|any))*)"
    r"|--(?:filter|site|auth)(?:=\S+|[ \t]+[^\s-]\S*)|--[a-z][\w-]*)){0,8}",
    "netlify_options",
)


# A key=value argument of vault: the key, then the value up to the next space.
_VAULT_PAIR = rf"(?<=\s)(?!-)([\w.\-]+=)(?!@|-(?:\s|$)){_VALUE}"


# What follows the "@" that ends a URL's password: a host, maybe a port, then the path.
_URL_HOST = r"(?=(?:\[[0-9A-Fa-f:.]*\]|[\w\-][\w.\-]*)(?::[0-9]+)?(?![\w.\-:@%]))"


# A name with a secret word in it, then "=", ":", ":=", "=>" after a quoted name, or
# spaces after a command-line flag (_assigned_value checks the "-"). The match starts
# at the secret word (found case-sensitively on its first letter, which is fast) and
# _assignment_masks reads the whole name back from there.
_ASSIGNMENT = (
    r"(?P<name>[PpSsTtKkCc](?i:ass|w|ecret|oken|ey|redential|(?<=[Pp])sk)[\w.\-]{0,40})"  # psk: a Wi-Fi key
    r"(?P<sep>(?:\\*[\"']\]?[ \t]*=>|(?:\\*[\"']\]?|\*{1,2})?[ \t]*(?::=|[=:](?![=:>]))(?:\*{1,2}(?=[ \t]))?)[ \t]*"
    r"|[ \t]+<-[ \t]+|[ \t]+)"
    rf"(?P<value>&[^\s\"',;]+|{_VALUE})"  # "&": a YAML anchor (_yaml_tagged_value)
)


_VALUE_AT = _Lazy(_VALUE)


# A secret's name in prose, then "is" ("was" after "password"; maybe a ":", and the value on the line
# below: "The password is:\n  x"), then its value (_mask_stated); a "password" then what it is for
# ("for the router is x"), "is now", a dash or set to it ("changed to x"; "changed the password to x",
# after a verb: _SET_BEFORE); a "pass phrase" then ":" too; a PIN (of 4 to 8 digits:
# a board's "pin: 13" is no secret), named with what it is for ("PIN for the card: 1234"), a Russian
# ПИН-код; a Russian "пароль — x", "пароль от почты — x";
# a password's name with no "is" at all, its value after a space, a "'s" or a ":" ("user bob, password
# hunter22x", "my password's x", "pwd x", "pw: x"): one word, masked only as "is" masks one (a letter
# and a digit or a sign: _STATED_WORD), so "password reset link", "password manager" stay (plain).
# Tried only where a trigger occurs (_mask_all_stated).
_STATED_TRIGGERS = (
    "password is",
    "password was",
    "passphrase is",
    "pass phrase",
    "passcode is",
    "secret is",
    "secret was",
    "secret phrase",
    "security answer",
    "token is",
    "token was",
    "key is",
    "key was",
    "pin is",
    "pin:",
    "pin for",
    "pin of",
    "pin code",
    "pin-code",
    "pin-код",
    "pin код",
    "pincode",
    "password for",
    "password to",
    "password of",
    "password on",
    "password -",
    "password has",
    "password have",
    "password had",
    "password got",
    "password changed",
    "password set",
    "password reset",
    "password updated",
    "password —",
    "password –",
    "пароль",
    "кодов",
    "секрет",
    "пин",
    "password ",
    "password'",
    "password(",
    "password,",
    "password?",
    "password’",
    "passwd",
    "passphrase ",
    "passcode ",
    "pw ",
    "pw:",
    "pass:",
    "pass is",
    "api key",
    "api token",
    "access key",
    "access token",
    "secret key",
    "токен",
    "ключ",
    "pwd",
)


# _mask_stated looks before the name: no letter, digit, "_" or "-" there.
_STATED = (
    r"((?:[Pp](?i:ass(?:word(?P<for>[ \t]+(?:for|to|of|on)(?:[ \t]+[^\s:=\"'`,;.]{1,40}){1,3}?)?"
    r"(?:(?P<set>(?:[ \t]+(?:has|have|had)[ \t]+been|[ \t]+(?:is|was|got))?[ \t]+(?:changed|set|reset|updated)[ \t]+to)"
    r"|[ \t]+(?:is|was)(?:[ \t]+now)?|[ \t]+(?:[—–-]|->|→)(?=[ \t])|(?P<to>[ \t]+to)|(?(for)(?=[ \t]*:\*{0,2}(?:[ \t]|\r?\n|\\n))|(?!)))"
    r"|(?:phrase|code)[ \t]+is|[ \t]+phrase(?:[ \t]+is|(?=[ \t]*:))))"
    r"|[Ss](?i:ecret(?:[ _-]key|[ \t]+phrase)?[ \t]+(?:is|was)|ecret[ \t]+(?:key|phrase)(?=[ \t]*:))"
    r"|[Aa](?i:(?:pi|ccess|uth)[ _-]?(?:token|key)[ \t]+(?:is|was)|(?:pi|ccess|uth)[ \t]+(?:token|key)(?=[ \t]*:))"
    r"|[Bb](?i:ot[ _-]?token[ \t]+(?:is|was))|(?P<tok>[Tt](?i:oken[ \t]+(?:is|was)))"
    r"|(?P<answer>[Ss](?i:ecurity[ \t]+answer[ \t]+(?:is|was))))"
    r"(?:[ \t]*:\*{0,2}[ \t]*(?:\r?\n|\\n)[ \t]*|(?:[ \t]*:\*{0,2})?[ \t]+)"  # "**Password for root:** x": Markdown's
    r"|(?P<pin>(?:[Pp](?i:in(?:[ \t-]?(?:code|код))?)|[Пп](?i:ин(?:[ \t-]?код)?))"
    r"(?:[ \t]+(?:(?i:от|для|к)[ \t]+)?[а-яёА-ЯЁ]{2,40}(?:[ \t]+[а-яёА-ЯЁ]{2,40})?"  # whose, in Russian: "ПИН карты"
    r"|[ \t]+(?i:for|of)(?:[ \t]+[A-Za-z]{1,40}){1,3}?)?"  # what for, in English: "PIN for the card"
    r"(?:[ \t]+(?i:is)(?:[ \t]*:)?[ \t]+|[ \t]*:[ \t]*|[ \t]+[—–][ \t]+))"
    r"|(?:[Пп](?i:ароль)(?:[ \t]+(?:[A-Za-z_]{1,40}|[А-Яа-яЁё]{1,40}(?:[аяиы]|ов|ей|ых|их))){0,2}"  # whose: "администратора"
    r"(?:[ \t]+(?:от|для|к|на)(?:[ \t]+[^\s:=\"'—–-]{1,40}){1,3}?)?"
    r"|[Кк](?i:одов(?:ое|ая)[ \t]+(?:слово|фраза))|[Сс](?i:екрет(?:ное[ \t]+слово|ная[ \t]+фраза)?)"
    r"|[Тт](?i:окен)|[Кк](?i:люч[ \t]+(?:api|апи|доступа))|(?i:api|апи)[ \t-]?(?i:ключ))"
    r"(?:[ \t]+[—–-]|(?:[ \t]+[—–-])?[ \t]+(?i:это)|[ \t]+(?i:был|была|было|будет|теперь)"
    r"|(?P<ru_verb>[ \t]+(?i:(?:поменя|смени|измени)(?:л[аи]?|н[аы]?)|(?:смен|измен)[её]н[аы]?))?(?P<ru_to>[ \t]+(?i:на)))[ \t]+"
    r"|(?P<plain>[Pp](?i:ass(?:word|wd|phrase|code|(?=[ \t]*:)|(?=[ \t]+is[ \t]))|wd?)(?:['’]s|[ \t]+(?i:is|was))?(?:[ \t]*:[ \t]*|[ \t]+|(?<=ord|ase|ode)(?P<aside>[ \t]*\([ \t]*|[?,][ \t]+)(?=[^\s(),]*[0-9!@#%^&*+=~]))"
    r"|[Пп](?i:ароль)(?:[ \t]+(?:от|для)[ \t]+[^\s:=\"'—–-]{1,40})?[ \t]+))"
    r"(?:(?P<quote>[`\"'«])(?P<quoted>[^`\"'«»\n]{4,200})(?:(?P=quote)|»)"
    r"|(?P<bare>(?:[^\s`\"',;()\\]|\\(?![nrt\"\\])){1,200})(?P<words>(?:[ \t]+[^\W\d_](?:[^\W\d_]|['’-]){0,40}){0,11}))"
)


# A snake_case identifier, no token: "the token is eos_token_2".
_SNAKE = _Lazy(r"[a-z]+(?:_[a-z0-9]+)+")


# "pass:" alone, the shortest name a password is given in a note ("wifi: Home / pass: x").
_PASS_COLON = _Lazy(r"(?i:pass)[ \t]*:")


# The quote that closes a stated value's opening one (Russian's «»).
_CLOSING = {"«": "»"}


# A bare word stated as a secret: letters and digits mixed, or a sign among them (hunter2, Zx9q!wer);
# not a word ending in a full stop or a comma, nor a path, a URL, a $VARIABLE.
_STATED_WORD = _Lazy(r"(?=[^\s]*[^\W\d_])(?:(?=[^\s]*[0-9])|(?=[^\s]*[!@#%^&*+=~?]))[^\s/$]+")


# A verb that sets a password, and what names it, before "password to x" ("changed the wifi password to").
_SET_BEFORE = _Lazy(
    r"(?i:\b(?:set|setting|change|changed|changing|reset|update|updated)[ \t]+"
    r"(?:(?:the|my|your|our|their|his|her|its|a|new|this)[ \t]+)?(?:[\w-]+[ \t]+)?)\Z"
)


# ... and in Russian, before "пароль на x" ("сменил пароль на", "поменяли свой пароль от почты на");
# after the name, the verb is in _STATED ("пароль сменён на x", "пароль поменял на x").
_SET_BEFORE_RU = _Lazy(
    r"(?i:(?<!\w)(?:поменя|смени|измени|установи|постави|зада|сброси|обнови)(?:л[аи]?|ть)[ \t]+"
    r"(?:(?:свой|свою|мой|мою|наш|его|её|ее|их|новый)[ \t]+)?)\Z"
)


# A word after a password's name alone that names how it is kept or sent, or whose it is, not the
# password: a hash or a cipher, an encoding, an address ("the password sha256 hash", "password utf-8"),
# a numeronym ("password i18n strings", "a11y", "o11y"), a protocol or a second factor ("password
# OAuth2 flow", "password 2FA-enabled accounts"), a size ("password (256-bit)", "password 12chars").
_PLAIN_NOT_SECRET = _Lazy(
    r"(?i:sha-?[0-9]+|md[45]|utf-?(?:8|16|32)|x86(?:_64)?|aes-?[0-9]+\w*|base64|argon2\w*|pbkdf2\w*|[^@\s]+@[\w-]+\.[\w.-]+"
    r"|[a-z][0-9]{1,2}[a-z]s?|oauth[0-9.]*|[0-9]fa(?:-[a-z]+)?|[0-9]+-[a-z]+|[0-9]+(?:chars?|bits?|bytes?|digits?))"
)


# A command that runs "passwd" as root, the word after it a user's name: "sudo passwd deploy1", "sudo
# -u root passwd" at a command's start (a line's, a JSON string's, after a prompt, ";", "&&", "|"), not
# "my sudo passwd x" (the end of the 80 characters before "passwd").
_SUDO_BEFORE = _Lazy(r"(?:\A|(?<=[\n;&|(`\"'$#])|(?<=\\[nt]))[ \t]*sudo(?:[ \t]+-\S+(?:[ \t]+[a-z_][\w-]*)?)*[ \t]+\Z")


# What names one password before its name and a comma, so a value in apposition follows ("the admin
# password, hunter22x, …"), not a list of fields' names ("username, password, token2").
_OWNED_BEFORE = _Lazy(r"(?i:\b(?:the|my|your|our|their|his|her|its|this|that)[ \t]+(?:[\w-]+[ \t]+){0,2})\Z")


# A login before a Russian password's name, which makes what follows the password ("логин bob, пароль синий кит").
_LOGIN_BEFORE = _Lazy(
    r"(?i:(?<!\w)(?:логин|login|user(?:name)?|пользователь|юзер)[ \t]*[:=]?[ \t]+"
    r"(?=[^\s,;/|]*[A-Za-z0-9@])[^\s,;/|]+[ \t]*(?:[,;/|][ \t]*)?)\Z"
)


# A PIN: digits alone.
_PIN = _Lazy(r"[0-9]{4,8}")


# A stated value that names a secret rather than being it: a constant's or a variable's name
# (`GITHUB_TOKEN`, settings.secret_key), or code.
_STATED_NAME = _Lazy(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Za-z_]\w*(?:\.\w+)+|.*[({].*|\$.*|.*\$[{(].*")


# A word stated after a password's name that is chosen as one: a letter, a digit and a sign (a field's
# name, "password_confirm", "field1", "--password-stdin", has no sign and a digit both).
_SIGNED_WORD = _Lazy(r"(?=\S*[^\W\d_])(?=\S*[0-9])(?=\S*[!@#%^&*+=~?$])[^\s/]{6,200}")


# A YAML node's properties, an anchor and a tag in either order, before its value on the line.
_YAML_PROPERTIES = _Lazy(r"(?:[&!][^\s\"',;]*[ \t]+){1,2}(?!#)")


# Tags whose value names a secret kept elsewhere, as a $VARIABLE does: Home Assistant's and ESPHome's
# secrets.yaml (!secret), an environment variable (!env_var, !ENV), a CloudFormation parameter or
# resource (!Ref, !GetAtt, !ImportValue), a file or a blueprint's input (!include, !input), GitLab's
# !reference. The name stays (it says which secret a setting uses); a value after any other tag is
# masked (!!str x, !vault's ciphertext, a custom tag).
_REFERENCE_TAGS = frozenset("secret env_var env ref getatt importvalue include input reference".split())


# A Russian secret word in the cases a label takes (пароль, пароля, паролем; токен, токена), maybe
# a qualifier after it ("от почты", "для CI"), then ":" or "=" and the value. Plurals stay, as
# English ones do ("пароли: в менеджере" names no secret).
_RUSSIAN_SECRET = (
    r"(?:парол(?:ь|я|ю|ем|е)|токен(?:а|у|ом|е)?|секрет(?:а|у|ом|е)?|секретн\w{1,4}[ \t]+ключ(?:а|у|ом|е)?|парольн\w{1,4}[ \t]+фраз\w{0,2}"
    r"|(?:api|апи)[ \t-]?ключ(?:а|у|ом|е)?|ключ(?:а|у|ом|е)?[ \t]+(?:api|апи|доступа)"
    r"|(?:кодов|секретн)\w{1,4}[ \t]+(?:слов(?:о|а|у|ом|е)|фраз\w{0,2}))"
)


_RUSSIAN_ASSIGNMENT = (
    rf"(?i)((?<!\w){_RUSSIAN_SECRET}(?:[ \t]+(?:[a-z_]{{1,40}}|[а-яё]{{1,40}}(?:[аяиы]|ов|ей|ых|их))){{0,2}}"  # whose: "root", "пользователя"
    rf"(?:[ \t]+(?:от|для|к|ко|на)(?:[ \t]+[^\s:=\"']{{1,40}}){{1,3}})?"
    r"(?:\\*[\"'])?[ \t]*(?::=|[=:](?![=:>]))[ \t]*)"
    rf"{_VALUE}(?P<more>(?:{_MORE_WORDS.pattern})?)"
)


_NAME_WORD = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+"


# A name whose last word ends in one of these holds a secret.
_STRONG = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "credential",
    "credentials",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "authkey",  # Tailscale's --authkey and TS_AUTHKEY, multiprocessing's authkey=
    "psk",  # a Wi-Fi network's pre-shared key (wpa_supplicant's psk=, WIFI_PSK)
)


# Words set aside at the end of a name: environments, encodings, versions.
_QUALIFIERS = frozenset(
    "base value val raw enc encoded encrypted b64 base64 hex pem prod production"
    " dev devel development stage staging stg test testing qa uat live local sandbox demo"
    " old new prev previous current next backup secondary main default alt tmp temp v".split()
)


# A "<word>_key" name in lower or camel case (code, YAML, JSON) is a credential when one
# of its words says so; most are keys of a dict, a cache or a table (result_key).
_CREDENTIAL_KEYS = frozenset(
    "api access secret private encryption encrypt decryption crypto cipher signing sign"
    " signature hmac jwt master auth client app session license licence aes rsa ssh gpg pgp"
    " service account admin root deploy webhook consumer developer subscription shared"
    " secure security password token".split()
)


# An upper-case one (an environment variable: OPENAI_KEY, ENCRYPTION_KEY) is one unless
# the word before "key" names an ordinary kind of key: database, cache and data-structure
# keys, and public keys.
_NOT_SECRET_KEYS = frozenset(
    "primary foreign unique composite natural surrogate candidate partition sort range hash"
    " shard routing row column col field table index group lookup cache dict map hot short"
    " idempotency dedup dedupe object item entry record parent child public publishable pub"
    " i18n translation label message search order join cursor lock queue event metric"
    " attribute attr prop property type name list react".split()
)


_NOT_PASSWORDS = frozenset(
    "first second third fourth last next final single multi one two each every full render".split()
)


# A login's other fields, named as the first word after a secret's name with more on its line ("Credentials:
# username `admin`"): no value of it (_value_masks).
_FIELD_NAMES = frozenset("username user login email account".split())


_PROSE_AFTER = _Lazy(r"[ \t]+[^\s]")


# Values that are no secret: literals, type names, SQL placeholders, an ellipsis.
# "~" is YAML's null.
_LITERALS = frozenset(
    "true false null none nil undefined str bytes int bool string number boolean ? %s ... … ~".split()
)


# An unquoted value that is code: a call or a lookup (getpass(…), os.environ[…], Rust's
# std::env::var(…), Java's @Value(…)), a tuple, list or dict, an attribute of self.
_CODE_VALUE = r"[(\[{]|@?[A-Za-z_][\w.]*(?:::[A-Za-z_][\w.]*)*[(\[]|(?:self|this|cls)\."


# A value that names where a secret is, written in a language's or a tool's syntax rather than being
# it: a template's expression ("{{ vault_key }}", Helm's "{{ .Values.password }}", CloudFormation's
# "{{resolve:secretsmanager:…}}", ERB's <%= ENV['X'] %>), Windows' %DB_PASS%, Python's %(DB_PASS)s.
_TEMPLATE_VALUE = _Lazy(r"\{\{.*\}\}|\{%.*%\}|<%.*%>|%[A-Za-z_]\w*%|%\([\w.]+\)[sdrif]", re.DOTALL)


# An attribute path of code, unquoted (process.env.KEY, settings.SECRET_KEY, var.db_password): a
# reference when its root is one of code's (_REFERENCE_ROOTS), or one of its parts is a setting's word
# or a secret's name as code spells it (GH_TOKEN, secret_key_base), so "correct.horse" is a value.
_ATTRIBUTE_PATH = _Lazy(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[)\]}]*")


_REFERENCE_ROOTS = frozenset(
    "process os env environ import settings config conf cfg configuration secrets secret vars var local locals"
    " data module app application rails django flask current_app inputs steps needs github matrix window"
    " globalthis deno bun args argv options opts params props state kwargs ctx context req request body"
    " form payload event values spec input user creds credentials auth account session client conn"
    " connection db database model instance obj cli parsed namespace keys keyring vault".split()
)


_REFERENCE_PARTS = frozenset("env environ secrets settings config credentials vars params options".split())


# A word a secret's name holds (what _secret_name then judges whole): the patterns of names in
# other syntaxes match only such names, so ordinary tags and symbols cost no call.
_HINT = r"(?i:pass|pw|secret|token|key|credential)"


def _lead(prefix: str) -> str:
    """A key's ``prefix`` (fixed width) where no letter or digit comes before it.

    The pattern starts with the prefix itself, so re looks for it as a literal, which is
    fast, and only then looks back; ``_`` may come before (``mcp__x__sk-ant-…``).
    """
    return rf"{prefix}(?<![A-Za-z0-9]{prefix})"


# (triggers, pattern, replacement), in order: whole private keys first, then typed keys
# and headers, then key=value forms. A rule runs only when one of its triggers occurs in
# the lower-cased text, so the hook compiles (re caches) just the patterns it needs.
# A replacement of None masks group 2 and keeps group 1 (see _mask_value).
# Patterns that may start inside a run of word characters begin with a look-behind, or
# with a literal prefix and then a look-behind (_lead), so each run is tried once: the
# text is masked before it is clipped, so it may be long.
# A shell prompt's line whose last command prints what the line names a secret (a password, a token …),
# then the word the command printed, alone on the next line (the rule before "vault login"). It starts
# at the "$" and then looks behind it for a line's start or a blank, so re looks for the "$" alone: with
# "^[ \t]*" first, the search took 0.26 s over 1,500 files of site-packages holding "token" or "pass"
# (38 MB), 3% of masking them; this way 0.03 s.
_PRINTED_SECRET = (
    r"(\$(?<![^\n \t]\$)[ \t]+(?=[^\n]*(?i:pass|secret|token|credential|api_?key))(?:[^\n|]*\|[ \t]*)*"
    r"(?:sudo[ \t]+)?(?:cat|base64|echo|printenv|pass|gopass|op|vault|security|jq|secret-tool|lpass|bw|kubectl"
    r"|gcloud|aws|az)\b[^\n|]*\n[ \t]*)"
    r"(?!\$)(?![^\s]*\*\*\*)([^\s`][^\s`]{5,199})(?=[ \t]*(?:\r?\n|\Z))"
)


_RULES: list[tuple[tuple[str, ...], str, Any]] = [
    (
        ("private key",),
        # PGP's armor says "PRIVATE KEY BLOCK"; PEM's ends at "KEY".
        r"(?s)-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|$)",
        r"-----BEGIN \1----- " + MASK + r" -----END \1-----",
    ),
    (("sk-",), rf"({_lead('sk-')}(?:ant-|proj-|live-|test-)?)[A-Za-z0-9_\-]{{16,}}", r"\1" + MASK),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), rf"({_lead('gh[pousr]_')})[A-Za-z0-9]{{20,}}", r"\1" + MASK),
    (("github_pat_",), rf"({_lead('github_pat_')})[A-Za-z0-9_]{{20,}}", r"\1" + MASK),
    (("akia", "asia"), rf"({_lead('A[KS]IA')})[0-9A-Z]{{16}}\b", r"\1" + MASK),
    (("xox",), rf"({_lead('xox[abposre]-')})[A-Za-z0-9\-]{{10,}}", r"\1" + MASK),
    (("xapp-",), rf"({_lead('xapp-')})[A-Za-z0-9\-]{{10,}}", r"\1" + MASK),  # Slack app-level tokens
    (("aiza",), rf"({_lead('AIza')})[0-9A-Za-z_\-]{{35}}", r"\1" + MASK),
    # Not here: Twilio's "SK" + 32 hex is a key's id, not its secret, and the secret that
    # goes with it (32 characters, no prefix) has no shape to find it by.
    # Stripe secret and restricted keys and webhook secrets. Publishable keys (pk_live_…)
    # are public by design, made to ship in web pages: they stay.
    (
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        rf"({_lead('[sr]k_(?:live|test)_')})[A-Za-z0-9]{{16,}}",
        r"\1" + MASK,
    ),
    (("whsec_",), rf"({_lead('whsec_')})[A-Za-z0-9+/=]{{24,}}", r"\1" + MASK),
    (("hf_",), rf"({_lead('hf_')})[A-Za-z0-9]{{30,}}", r"\1" + MASK),  # Hugging Face
    # GitLab: personal, deploy, runner, pipeline trigger, CI job, feed, incoming mail,
    # OAuth application, service account and agent tokens.
    (
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glimt-", "gloas-", "glsoat-", "glagent-", "glffct-"),
        rf"({_lead('gl')}(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat|agent|ffct)-)[A-Za-z0-9_\-]{{20,}}",
        r"\1" + MASK,
    ),
    # GitLab's runner registration tokens (deprecated, still issued by older instances): "GR1348941" then 20.
    (("gr1348941",), rf"({_lead('GR1348941')})[A-Za-z0-9_\-]{{20,}}", r"\1" + MASK),
    # Netlify's personal access tokens (nfp_ and 36 to 40 letters and digits: at 40 characters the long-token
    # rule missed some, and any of one case or without a digit); Vercel's since 2025 (personal vcp_, integration
    # vci_, app access vca_ and refresh vcr_, API keys vck_; the classic tokens of 24 characters were too short
    # for the long-token rule); Notion's internal integration secrets (ntn_, 11 digits, then 35); Hugging Face's
    # organisation tokens (api_org_ and 34 letters, no digit: the long-token rule leaves them); a Cloudflare
    # Origin CA key (v1.0-, 24 and 146 hex digits: lower case, which the long-token rule leaves).
    (("nfp_",), rf"({_lead('nfp_')})[A-Za-z0-9]{{30,}}", r"\1" + MASK),
    (("vcp_", "vci_", "vca_", "vcr_", "vck_"), rf"({_lead('vc[piakr]_')})[A-Za-z0-9]{{20,}}", r"\1" + MASK),
    (("ntn_",), rf"({_lead('ntn_')})[0-9]{{11}}[A-Za-z0-9]{{30,}}", r"\1" + MASK),
    (("api_org_",), rf"({_lead('api_org_')})[A-Za-z]{{30,}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("v1.0-",), rf"({_lead('v1[.]0-')})[a-f0-9]{{24}}-[a-f0-9]{{146}}(?![A-Za-z0-9])", r"\1" + MASK),
    # A Slack incoming webhook: the workspace and channel ids stay, the secret goes.
    (
        ("hooks.slack.com/services/",),
        r"(hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/)[A-Za-z0-9]{8,}",
        r"\1" + MASK,
    ),
    (("npm_",), rf"({_lead('npm_')})[A-Za-z0-9]{{36,}}", r"\1" + MASK),
    (("pypi-ag",), rf"({_lead('pypi-')})Ag[A-Za-z0-9_\-]{{50,}}", r"\1" + MASK),  # a macaroon
    (("ya29.",), rf"({_lead('ya29[.]')})[A-Za-z0-9_\-]{{20,}}", r"\1" + MASK),  # Google OAuth
    (
        ("sg.",),  # SendGrid: SG.<22>.<43>
        rf"({_lead('SG[.]')})[A-Za-z0-9_\-]{{22}}\.[A-Za-z0-9_\-]{{43}}(?![A-Za-z0-9_\-])",
        r"\1" + MASK,
    ),
    (
        ("dop_v1_", "doo_v1_", "dor_v1_"),  # DigitalOcean
        rf"({_lead('do[opr]_v1_')})[a-f0-9]{{64}}(?![A-Za-z0-9])",
        r"\1" + MASK,
    ),
    (
        ("shpat_", "shpca_", "shppa_", "shpss_"),  # Shopify
        rf"({_lead('shp(?:at|ca|pa|ss)_')})[a-fA-F0-9]{{32}}(?![A-Za-z0-9])",
        r"\1" + MASK,
    ),
    # A Telegram bot's token (its numeric id stays; "bot" before it in the API's URLs) and a
    # Discord webhook's secret.
    ((":aa",), r"(?:(?<=bot)|(?<![\w:]))([0-9]{8,10}:)AA[A-Za-z0-9_\-]{30,}", r"\1" + MASK),
    (
        ("/api/webhooks/",),
        r"(discord(?:app)?\.com/api/webhooks/[0-9]+/)[A-Za-z0-9_\-]{30,}",
        r"\1" + MASK,
    ),
    # age's (and so sops') secret keys: upper-case Bech32, which the long-token rule leaves as
    # it leaves CONSTANT_NAMES; Google's OAuth client secrets.
    (("age-secret-key-1",), rf"({_lead('AGE-SECRET-KEY-1')})[0-9A-Z]{{20,}}", r"\1" + MASK),
    (("hrku-",), rf"({_lead('HRKU-')})[A-Za-z0-9_\-]{{20,}}", r"\1" + MASK),  # Heroku's API keys since 2024
    (("gocspx-",), rf"({_lead('GOCSPX-')})[A-Za-z0-9_\-]{{20,}}", r"\1" + MASK),
    # Databricks personal access tokens: "dapi" and 32 hex digits, maybe "-2" after.
    (("dapi",), rf"({_lead('dapi')})[a-f0-9]{{32}}(?:-[0-9]+)?(?![A-Za-z0-9])", r"\1" + MASK),
    # More keys by their prefix (gitleaks' rules) that the long-token rule leaves, lower-case hex, upper case
    # alone or shorter than 40 characters: Docker Hub's, Supabase's, New Relic's, Postman's, Pulumi's, Render's,
    # Sentry's user tokens, Tailscale's, Bitbucket's app passwords, Mailgun's, Alibaba Cloud's access key ids, and
    # Azure AD (Entra ID) client secrets (3 characters, a digit, "Q~", then 31 to 34). The prefixes of keys of 40
    # random characters or more (Vault's hvs., Doppler's dp.pt., Groq's gsk_, xAI's, Linear's …) cost a scan of
    # every text each and add nothing: that rule masks them (tests/test_ledger_redact.py).
    (("dckr_",), rf"({_lead('dckr_(?:pat|oat)_')})[A-Za-z0-9_\-]{{20,}}", r"\1" + MASK),
    (("sbp_",), rf"({_lead('sbp_')})[A-Za-z0-9_\-]{{20,}}", r"\1" + MASK),
    (("sb_secret_",), rf"({_lead('sb_secret_')})[A-Za-z0-9_\-]{{20,}}", r"\1" + MASK),
    (("nrak-",), rf"({_lead('NRAK-')})[A-Z0-9]{{27}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("pmak-",), rf"({_lead('PMAK-')})[a-f0-9]{{24}}-[a-f0-9]{{34}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("pul-",), rf"({_lead('pul-')})[a-f0-9]{{40}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("rnd_",), rf"({_lead('rnd_')})[A-Za-z0-9]{{32}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("sntryu_",), rf"({_lead('sntryu_')})[a-f0-9]{{64}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("tskey-",), rf"({_lead('tskey-')}(?:api|auth|client|scim|webhook)-)[A-Za-z0-9\-]{{20,}}", r"\1" + MASK),
    (("atbb",), rf"({_lead('ATBB')})[A-Za-z0-9]{{32,}}", r"\1" + MASK),
    (("key-",), r"(key-(?<![\w.\-]key-))[a-f0-9]{32}(?![A-Za-z0-9])", r"\1" + MASK),  # Mailgun; "cache-key-<md5>" stays
    (("ltai",), rf"({_lead('LTAI')})[A-Za-z0-9]{{20}}(?![A-Za-z0-9])", r"\1" + MASK),
    # Sourcegraph (sgp_, an instance's id or local_ maybe before the key), Buildkite, Square, 1Password's
    # Secret Key, Dynatrace (upper case alone after its prefix), Mailchimp (its datacenter after the key),
    # Twilio's account SID and auth token written as the pair its clients take.
    (("sgp_",), rf"({_lead('sgp_')}(?:[a-f0-9]{{16}}_|local_)?)[a-f0-9]{{40}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("bkua_",), rf"({_lead('bkua_')})[a-f0-9]{{40}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("sq0atp-", "sq0csp-"), rf"({_lead('sq0(?:atp|csp)-')})[A-Za-z0-9_\-]{{22,}}", r"\1" + MASK),
    (("a3-",), rf"({_lead('A3-')})[A-Z0-9]{{6}}(?:-[A-Z0-9]{{5,6}}){{5}}(?![A-Za-z0-9])", r"\1" + MASK),
    (("dt0c01.",), r"((?<![A-Za-z0-9])dt0c01\.)[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])", r"\1" + MASK),
    (("-us",), r"(?<![A-Za-z0-9])[0-9a-f]{32}(?=-us[0-9]{1,2}(?![A-Za-z0-9]))", MASK),
    ((":",), r"(AC[0-9a-f]{32}:)(?<![A-Za-z0-9]AC[0-9a-f]{32}:)[0-9a-f]{32}(?![A-Za-z0-9])", r"\1" + MASK),
    (
        ("q~",),
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        MASK,
    ),
    (
        ("authorization",),
        r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token)\s+)[^\s\"'\\]+",  # "\n": JSON's break
        r"\1" + MASK,
    ),
    # An Authorization header of another scheme (Discord's Bot, Okta's SSWS, FCM's key=) or with a
    # token and no scheme: what looks like a token (12 characters or more, a digit in them), after a
    # header's ":" (authorization = base64.decodebytes(…) is code), not a scheme's name=value
    # parameters (OAuth oauth_token=…, AWS4's Credential=…: masked as assignments).
    (
        ("authorization",),
        r"(?i)((?<![\w-])(?:proxy-)?authorization\\*[\"']?[ \t]*:[ \t]*\\*[\"']?(?:[a-z][\w-]*[ \t]+|key=)?)"
        r"(?!(?-i:[A-Za-z][A-Za-z_]*=))(?=[\w.~+/=\-]*[0-9])[\w.~+/=\-]{12,}(?![\w.~+/=\-(])",
        r"\1" + MASK,
    ),
    # A container registry's login in Docker's config.json (podman's auth.json): "auth" holds base64 of
    # "user:password" (_mask_basic_auth: what it decodes to must hold a ":", so "auth": "oauth2" stays).
    (
        ('auth"', "auth'", 'auth\\"'),
        r"((?<![\w-])\\*[\"']auth\\*[\"'][ \t]*:[ \t]*\\*[\"'])([A-Za-z0-9+/]{8,}={0,2})(?=\\*[\"'])",
        "basic auth",
    ),
    # A signed URL's signature, which lets whoever holds the URL in: an Azure SAS token's sig= (in a URL, az's
    # --sas-token, a connection string's SharedAccessSignature=), S3's and GCS's X-Amz-/X-Goog-Signature=,
    # CloudFront's Signature=. Only after "?", "&" or ";", 16 characters or more: a keyword argument
    # (verify(signature=sig)) stays.
    (
        ("sig=", "signature="),
        r"((?<=[?&;])(?i:sig|signature|x-amz-signature|x-goog-signature)=)([^\s&#\"'\\<>]{16,})",
        r"\1" + MASK,
    ),
    # Cookies hold sessions: every value of a Cookie header, a Set-Cookie's first (its own; the
    # attributes after it, Path=/ and the rest, are not secret); curl's --cookie and -b NAME=X
    # (without "=" it names a file of cookies).
    (
        ("cookie",),
        r"(?i)(?<![\w-])((?:set-)?cookie\\*[\"']?\s*:\s*\\*[\"']?)([\w.%!#$&*+^`|~-]+=[^\r\n'\"\\]*)",
        "cookie",
    ),
    (("cookie",), rf"((?<![\w-])--cookie\s+\\*[\"']?)({_COOKIES})", "cookie"),
    (("curl",), rf"(\bcurl\b{_SAME_COMMAND}\s-b\s*\\*[\"']?)({_COOKIES})", "cookie"),
    # A bare "Bearer <token>": the token must look like one (a digit or punctuation in it),
    # so prose such as "bearer authentication" stays.
    (
        ("bearer",),
        r"(?i)(bearer(?<!\wbearer)\s+)(?=[\w.~+/=\-]*[0-9.~+/=\-])[\w.~+/=\-]{12,}",
        r"\1" + MASK,
    ),
    # A JSON web token: header.payload.signature, the first two base64url JSON objects.
    (("eyj",), rf"({_lead('eyJ')})[A-Za-z0-9_\-]{{8,}}\.eyJ[A-Za-z0-9_\-]{{8,}}\.[A-Za-z0-9_\-]*", r"\1" + MASK),
    # user:password@ in a URL, the user maybe empty (redis://:pw@host). The password runs to
    # the last "@" that a host follows, so an "@" or a "/" inside it is masked too; a
    # host:port/ is no password (http://localhost:5173/@vite/client).
    (
        ("://",),
        rf"(://[^\s:/@'\"\[\]]*:)(?![0-9]+/)[^\s'\"]{{1,200}}(@){_URL_HOST}",
        r"\1" + MASK + r"\2",
    ),
    # A token as a URL's user, no password after it (git clone https://<token>@github.com/…, an Azure
    # DevOps PAT): 32 characters or more, letters and digits; a person's name is shorter, or has no digit.
    (
        ("://",),
        rf"(://)(?=[A-Za-z_\-]*[0-9])(?=[0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{{32,200}}(@){_URL_HOST}",
        r"\1" + MASK + r"\2",
    ),
    # Password options of command-line clients, within the same command only: mysql's -p
    # takes its value attached (-pSECRET; a lone -p prompts, and -P is the port).
    (
        ("mysql", "mariadb"),
        rf"((?i:\b(?:mysql\w*|mariadb[\w-]*))\b{_SAME_COMMAND}\s-p){_VALUE}",
        None,
    ),
    (("sshpass",), rf"((?i:\bsshpass)\b{_SAME_COMMAND}\s-p\s*)(?!-){_VALUE}", None),
    (("redis-cli",), rf"(\bredis-cli\b{_SAME_COMMAND}\s(?:-a\s*|--pass\s+))(?!-){_VALUE}", None),
    # curl -u user:password (and --user, -U/--proxy-user): the user stays.
    (
        ("curl",),
        rf"(\bcurl\b{_SAME_COMMAND}\s(?:-[uU]\s*|--(?:proxy-)?user(?:\s+|=))){_VALUE}",
        "user_password",
    ),
    # httpie's (xh's) -a/--auth user:password (_mask_httpie_auth reads the command it is an option of).
    ((" -a", "--auth"), rf"((?<![\w-])(?:-a[ \t]*|--auth(?:[ \t]+|=)))(?![-$]){_VALUE}", "httpie"),
    # aws configure's prompts answered: "AWS Secret Access Key [****************EKEY]: X" (the brackets hold
    # the last four characters of the key there, None or nothing), the access key's id's the same.
    (
        ("access key",),
        rf"(AWS (?:Access Key ID|Secret Access Key) \[[^\]\n]{{0,40}}\]:[ \t]*)(?![-$]){_VALUE}",
        None,
    ),
    # git config [options] NAME VALUE (no "="), where the name names a secret: github.token, hub.oauthtoken.
    (
        ("git config",),
        r"(git(?<![\w-]git)[ \t]+config"
        + _atomic(r"(?:[ \t]+(?:(?:-f|--file|--blob)[ \t]+\S+|--?[\w-]+(?:=\S+)?))*", "git_options")
        + r"[ \t]+)"
        rf"(?P<name>[A-Za-z][\w-]*(?:\.[^\s.=]+)+)[ \t]+(?![-$])(?P<value>{_VALUE})",
        "named",
    ),
    # netlify env:set NAME VALUE: a value whose name names a secret, as an assignment's is, or marked --secret.
    (
        ("env:set",),
        rf"(netlify(?<![\w-]netlify)[ \t]+env:set(?P<options>{_NETLIFY_OPTIONS})[ \t]+(?P<name>[A-Za-z_][\w.-]*)[ \t]+)"
        rf"(?![-$])(?P<value>{_VALUE})(?P<rest>[^\n;&|]{{0,400}})",
        "netlify",
    ),
    # aws configure set aws_secret_access_key VALUE (no "=", so the rule below misses it)
    (
        ("configure",),
        rf"(?i)(\bconfigure\s+set\b{_SAME_COMMAND}\s(?:[\w-]+\.)*"
        rf"(?:aws_secret_access_key|aws_session_token|aws_security_token)\s+)(?![-$]){_VALUE}",
        None,
    ),
    # More clients' password options: openssl's "-pass pass:X" (and -passin, -passout; an
    # env: or file: source names no secret) and "enc -k X", keytool's -storepass/-keypass,
    # a registry login's -p, mongo's -p, sqlcmd's -P. A value starting with "-" is the next
    # option (a lone -p prompts).
    # A backslash before a quote, "n", "r", "t" or another is JSON's escape: the value ends there.
    (("pass:",), r"((?<![\w-])-pass(?:in|out|word)?\s+pass:)(?:[^\s\"'\\]|\\(?![\\nrt\"']))+", r"\1" + MASK),
    (("openssl",), rf"(\bopenssl\b{_SAME_COMMAND}\s-k\s+)(?!-){_VALUE}", None),
    (("storepass", "keypass"), rf"((?<![\w-])-(?:src|dest)?(?:store|key)pass\s+)(?!-){_VALUE}", None),
    (
        ("login",),
        rf"(\b{_LOGIN}\s+login\b{_SAME_COMMAND}\s-p(?:\s+|=))(?!-){_VALUE}",
        None,
    ),
    # Other command-line clients' "login … -p X" (OpenShift's oc, Cloud Foundry's cf, expo, twilio …): a value
    # of digits alone is a port's, and stays; the client's name starts a command ("the login -p flag" stays).
    (
        ("login",),
        rf"(login(?<=[ \t]login)\b{_SAME_COMMAND}\s-p(?:\s+|=))(?!-)(?![0-9]{{1,5}}(?![^\s\"';&|]))(?![$]){_VALUE}",
        "client login",  # a literal first, then _mask_client_login reads the client's name before it
    ),
    # ngrok's authtoken, what openssl passwd and mkpasswd hash (the password itself), a Wi-Fi password given to
    # nmcli (quoted: "password 'correct horse'").
    (("authtoken",), rf"(\bngrok[ \t]+(?:config[ \t]+add-authtoken|authtoken)[ \t]+)(?![-$]){_VALUE}", None),
    (
        ("openssl passwd", "mkpasswd"),
        r"(\b(?:openssl[ \t]+passwd(?:[ \t]+(?:-salt[ \t]+\S+|-\w+))*|mkpasswd(?:[ \t]+(?:-[mSR][ \t]+\S+|--?[\w-]+(?:=\S+)?))*)[ \t]+)"
        rf"(?![-$<>|&;])({_quoted(chr(34), 'dq')}|{_quoted(chr(39), 'sq')}|[^\s\"'`;&|()<>\\]+)",
        None,
    ),
    (
        ("password", "psk"),
        rf"(\bnmcli\b{_SAME_COMMAND}[ \t](?:password|wifi-sec\.psk|802-11-wireless-security\.psk)[ \t]+)(?![-$]){_VALUE}",
        None,
    ),
    (("mongo",), rf"(\bmongo(?:sh|dump|restore|import|export|stat|top)?\b{_SAME_COMMAND}\s-p\s+)(?!-){_VALUE}", None),
    (("sqlcmd",), rf"(\bsqlcmd\b{_SAME_COMMAND}\s-P\s*)(?!-){_VALUE}", None),
    # What echo or printf pipes into a registry login that reads its password from stdin.
    (
        ("password-stdin",),
        rf"(\b(?:echo|printf)(?:\s+-[neE]+)*\s+(?:\\*[\"']%s(?:\\+n)?\\*[\"']\s+)?)(?!-){_VALUE}"
        rf"(?=[ \t]*\|[ \t]*(?:sudo\s+)?{_LOGIN}\s+login\b[^\n;&|]{{0,400}}--password-stdin)",
        None,
    ),
    # A token or a secret other commands read on stdin (gh auth login --with-token, gh secret set NAME without
    # --body, wrangler secret put NAME): what echo or printf pipes to them, and a here-string given to them or
    # to a registry login's --password-stdin ("<<< x"; after a secret's flag, _mask_assignments reads it).
    (
        ("with-token", "gh secret", "secret put", "gcloud secrets", "env add"),
        rf"(\b(?:echo|printf)(?:\s+-[neE]+)*\s+(?:\\*[\"']%s(?:\\+n)?\\*[\"']\s+)?)(?!-){_VALUE}"
        rf"(?=[ \t]*\|[ \t]*(?:sudo\s+)?{_STDIN_READERS})",
        None,
    ),
    (
        ("password-stdin", "with-token", "gh secret", "secret put", "gcloud secrets", "env add"),
        rf"((?:{_STDIN_READERS}|\b{_LOGIN}\s+login\b[^\n;&|]{{0,400}}?--password-stdin)[^\n;&|]{{0,400}}?<<<[ \t]*)(?!-){_VALUE}",
        None,
    ),
    # More passwords given to commands and servers: MySQL's IDENTIFIED BY 'x'; Redis's requirepass and
    # masterauth (a config line, a --flag, CONFIG SET); ssh-keygen's passphrase (-N, -P; an empty one stays);
    # zip's and unzip's -P x, 7-Zip's -px; smbclient's -U user%x; az login's -p x; vault login's token;
    # rabbitmqctl's add_user/change_password user x; a (user, password) pair of quoted strings in Python
    # (auth=(…), HTTPBasicAuth(…), smtplib's and the others' .login(…)); htpasswd's -b (_mask_htpasswd);
    # what echo pipes to sudo -S, passwd --stdin or chpasswd (its user stays); gh secret set's --body;
    # ansible-vault encrypt_string's plain text.
    (
        ("identified",),
        rf"([Ii](?<![\w][Ii])(?i:dentified(?:[ \t]+with[ \t]+\w+)?[ \t]+by(?:[ \t]+password)?[ \t]+))({_quoted(chr(39), 'sq')}|{_quoted(chr(34), 'dq')})",
        None,
    ),
    # A database user's password in SQL besides MySQL's: PostgreSQL's CREATE/ALTER USER|ROLE … [WITH] [ENCRYPTED]
    # PASSWORD 'x', SQL Server's CREATE/ALTER LOGIN … WITH PASSWORD = 'x', MySQL's SET PASSWORD [FOR u] = 'x'
    # (_mask_sql_password reads the statement before "PASSWORD"); MongoDB's createUser/updateUser({… pwd: "x"})
    # and changeUserPassword("u", "x"); Redis's AUTH [user] x, after redis-cli or its "host:port> " prompt.
    (
        ("password '", 'password "', "password='", "password ='", "password = '", "password (", "set password"),
        rf"([Pp](?i:assword)(?:[ \t]+(?i:for)[ \t]+[^=\n]{{1,100}}?[ \t]*=|[ \t]*=?)[ \t]*(?:(?i:password)[ \t]*\([ \t]*)?)"
        rf"({_quoted(chr(39), 'sq')}|{_quoted(chr(34), 'dq')})",
        "sql password",
    ),
    (
        ("pwd:", "pwd :"),
        rf"(\b(?:createUser|updateUser)[ \t]*\([^)]{{0,400}}?\bpwd[ \t]*:[ \t]*)({_quoted(chr(39), 'sq')}|{_quoted(chr(34), 'dq')})",
        None,
    ),
    (
        ("changeuserpassword",),
        rf"(\bchangeUserPassword[ \t]*\([ \t]*(?:'[^'\n]{{0,200}}'|\"[^\"\n]{{0,200}}\")[ \t]*,[ \t]*)({_quoted(chr(39), 'sq')}|{_quoted(chr(34), 'dq')})",
        None,
    ),
    (
        ("auth ",),
        rf"((?:\bredis-cli\b[^\n;&|]{{0,400}}?[ \t]|:[0-9]{{1,5}}(?:\[[0-9]+\])?>[ \t]*)(?:AUTH|auth)[ \t]+(?:[^\s\"'-][^\s\"']*[ \t]+)?)(?![-$]){_VALUE}",
        None,
    ),
    (
        ("requirepass", "masterauth"),
        r"(?m)((?:^[ \t]*|(?<=\\n)[ \t]*|--|(?i:config[ \t]+set[ \t]+))(?:requirepass|masterauth)[ \t]+)(?!-)" + _VALUE,
        None,
    ),
    (
        ("wpa_passphrase",),
        rf"(\bwpa_passphrase[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s=]+)[ \t]+)(?![-<>|&;]){_VALUE}",
        None,
    ),
    (("ssh-keygen",), rf"(\bssh-keygen\b{_SAME_COMMAND}\s-[NP][ \t]*)(?!-){_VALUE}", None),
    (("zip",), rf"(zip(?:(?<![\w-]zip)|(?<=(?<![\w-])unzip))\b{_SAME_COMMAND}\s-P[ \t]+)(?!-){_VALUE}", None),
    (("7z",), rf"(7z(?<![\w-]7z)a?\b{_SAME_COMMAND}\s-p)(?=[^\s-]){_VALUE}", None),
    (
        ("smbclient",),
        rf"(\bsmbclient\b{_SAME_COMMAND}\s(?:-U|--user(?:=|[ \t]+))[ \t]*\\*[\"']?[^\s%\"']+%){_VALUE}",
        None,
    ),
    (("az login",), rf"(\baz[ \t]+login\b{_SAME_COMMAND}\s(?:-p|--password)(?:[ \t]+|=))(?!-){_VALUE}", None),
    # Windows' net use: the password after the share (before /user:name, as its help has it) or after /user:name
    # or its short form /u:name.
    (
        ("net use",),
        r"((?i:\bnet[ \t]+use)\b(?:[^\n;&|]{0,400}?[ \t]/(?i:u(?:ser)?):[^\s/]+|[ \t]+(?:[A-Za-z]:[ \t]+)?\\\\+[^\s/]+)[ \t]+)"
        rf"(?![/*]){_VALUE}",
        None,
    ),
    # A command at a "$ " prompt that prints a secret (its line names one: cat initialAdminPassword,
    # kubectl … jsonpath="{.data.password}" | base64 -d, echo $DB_PASSWORD, pass show db/password), then
    # its output, one word alone on the next line: that word (_PRINTED_SECRET).
    (("pass", "secret", "token", "credential", "api_key", "apikey"), _PRINTED_SECRET, None),
    # heroku auth:token prints the CLI's API key alone on its line below it (a UUID, or HRKU-…), maybe after the
    # CLI's warnings (" ›   Warning: …"): a key no prefix nor name marks, in a console's output pasted or quoted.
    (
        ("auth:token",),
        r"(\bheroku[ \t]+auth:token\b[^\n\\]*(?:\r?\n|\\+n)(?:[ \t]*[›▸!][^\n\\]*(?:\r?\n|\\+n)){0,3}[ \t]*)"
        r"((?i:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})|HRKU-[A-Za-z0-9_\-]{20,})"
        r"(?=[ \t]*(?:\r?\n|\\+[nr]|\\*\"|\Z))",  # alone on its line
        None,
    ),
    (("vault login",), rf"(\bvault[ \t]+login[ \t]+)(?![-$])(?![^\s=]*=){_VALUE}", None),
    # OpenLDAP's clients' bind password, -w X or -wX (-W asks for it).
    (
        ("ldap",),
        rf"(\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b{_SAME_COMMAND}\s-w[ \t]*)(?![-\s]){_VALUE}",
        None,
    ),
    # Oracle's user/password (@database): sqlplus, its Data Pump and loader, rman's target, a thin JDBC URL.
    (
        ("sqlplus", "expdp", "impdp", "sqlldr", "rman target", "jdbc:oracle:"),  # "rman": "performance"
        r"((?i:\b(?:sqlplus|expdp|impdp|sqlldr|rman)\b(?:[ \t]+-[A-Za-z]+)*[ \t]+(?:userid=|target[ \t]+)?"
        r"|jdbc:oracle:(?:thin|oci):)\\*[\"']?[A-Za-z][\w$#.]*/)"
        r"([^\s@/\"'\\]+)(?<!\.sql)(?=@|[ \t]|\\*[\"']|\r|\n|\Z)",  # a script's path is none
        None,
    ),
    (
        ("rabbitmqctl",),
        rf"(\brabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+[^\s\"']+[ \t]+)(?!-){_VALUE}",
        None,
    ),
    (
        ("auth=", "auth =", "auth(", ".login("),
        r"((?:\bauth[ \t]*=[ \t]*[(\[]|\b(?:HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth|BasicAuth)[ \t]*\(|\.login[ \t]*\()"
        r"[ \t]*(?:'[^'\n]{0,200}'|\"[^\"\n]{0,200}\")[ \t]*,[ \t]*)"
        rf"({_quoted(chr(39), 'sq')}|{_quoted(chr(34), 'dq')})",
        None,
    ),
    (
        ("htpasswd",),
        r"(\bhtpasswd(?P<flags>(?:[ \t]+-[A-Za-z]+)+))(?P<args>(?:[ \t]+[^\s\-;&|][^\s;&|]*){2,3})",
        "htpasswd",
    ),
    (
        ("sudo -", "--stdin"),
        rf"(\b(?:echo|printf)(?:\s+-[neE]+)*\s+)(?!-){_VALUE}"
        r"(?=[ \t]*\|[ \t]*(?:sudo(?:[ \t]+-[A-Za-z]+)*?[ \t]+-[A-Za-z]*S\b|(?:sudo[ \t]+)?passwd[ \t]+--stdin\b))",
        None,
    ),
    (
        ("chpasswd",),
        rf"(\b(?:echo|printf)(?:\s+-[neE]+)*\s+)(?!-){_VALUE}(?=[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b)",
        "user_password",
    ),
    (("gh secret",), rf"(\bgh[ \t]+secret[ \t]+set\b{_SAME_COMMAND}\s(?:--body|-b)(?:[ \t]+|=))(?!-){_VALUE}", None),
    (
        ("encrypt_string",),
        rf"(\bansible-vault[ \t]+encrypt_string[ \t]+(?:--?[\w-]+(?:=\S+)?[ \t]+)*)(?!-){_VALUE}",
        None,
    ),
    # rclone's config create NAME TYPE KEY VALUE … (update, password: NAME KEY VALUE …), pairs with no "=" the
    # assignment rule reads, and a secret's name only rclone gives one ("pass", "key": _mask_rclone); the
    # password rclone obscure takes and rclone reveal gives back (obscuring is no encryption: reveal undoes it);
    # rclone.conf's "pass = x" at a line's start (Python's "pass" is a statement, never a name assigned).
    (("rclone",), rf"(\brclone[ \t]+config[ \t]+(?:create|update|password)\b)({_IN_COMMAND}{{1,2000}})", "rclone"),
    (("rclone",), rf"(\brclone[ \t]+(?:obscure|reveal)[ \t]+)(?![-$]){_VALUE}", None),
    (
        ("pass",),
        rf"(pass(?:(?<![\w.$-]pass)|(?<=\\npass))[ \t]*=[ \t]*)(?![$#]){_VALUE}",
        "ini pass",
    ),  # a literal first: fast
    # What a command stores as a secret: every --from-literal=KEY=X of kubectl's (oc's) create secret, every
    # KEY=X of fly's (flyctl's, infisical's) secrets set and doppler's KEY X, aws secretsmanager's
    # --secret-string X (not file://), the --value X of an SSM SecureString and of az keyvault secret set; the
    # secret key of MinIO's mc alias set NAME URL ACCESS SECRET.
    (
        ("create secret",),
        rf"(\b(?:kubectl|oc)\b{_IN_COMMAND}{{0,200}}?\bcreate[ \t]+secret\b)((?:[^\n;&|\\]|&(?![\s&;|<>()]|\Z)|\\[^\n]|\\\n){{1,4000}})",
        "from literal",
    ),
    (("secrets set",), rf"(\b(?:fly|flyctl|infisical)[ \t]+secrets[ \t]+set\b)({_IN_COMMAND}{{1,2000}})", "vault"),
    (("secrets set",), rf"(\bdoppler[ \t]+secrets[ \t]+set[ \t]+[A-Za-z_][\w.-]*[ \t]+)(?![-$]){_VALUE}", None),
    (
        ("secret-string", "secret-binary"),
        rf"(--secret-(?:string|binary)(?:[ \t]+|=))(?!fileb?://)(?![-$]){_VALUE}",
        None,
    ),
    (
        ("put-parameter", "keyvault secret"),
        rf"(\b(?:aws[ \t]+ssm[ \t]+put-parameter|az[ \t]+keyvault[ \t]+secret[ \t]+set)\b)({_IN_COMMAND}{{1,2000}})",
        "value flag",
    ),
    (
        ("alias set", "host add"),
        r"(\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)(?:[ \t]+[^\s-]\S*){3}[ \t]+)(?![-$])" + _VALUE,
        None,
    ),
    # vault kv put / patch, vault write: every key=value after the path is the secret kept
    # (its -flags, a value read from a file, @x, or from stdin, -, stay).
    (("vault",), rf"(\bvault\s+(?:kv\s+(?:put|patch)|write)\b)({_IN_COMMAND}{{1,2000}})", "vault"),
    # .netrc: a machine's password after its login (machine HOST login USER password X, on one line
    # or several, in JSON text too); the pattern starts at "login" (a literal: fast) and _mask_netrc
    # finds "machine HOST" or "default" before it, the host with a dot or localhost, so prose
    # ("machine learning login page password reset") stays.
    (
        ("login",),
        rf"(login(?:(?<![\w-]login)|(?<=\\[nrt]login)){_GAP}[^\s\\]+(?:{_GAP}account{_GAP}[^\s\\]+)?{_GAP}password{_GAP}){_VALUE}",
        "netrc",
    ),
    # .pgpass: host:port:database:user:password, a line each (the port digits or "*"); the password
    # runs to the line's end. The pattern starts at the colon before the port (a literal: fast) and
    # _mask_pgpass reads the host back to the line's start: a name, an address or "*".
    (
        (":",),
        r"(?m):(?:[0-9]+|\*):[^\s:\\]+:(?:\*|[A-Za-z_][\w.@\-]*):((?:[^\s:\\]|\\:)+)"
        r"(?=[ \t]*(?:\r?$|\\+[nr]|\\*\"))",
        "pgpass",
    ),
    # A secret's name in other syntaxes, judged as an assignment's name is (_secret_name):
    # an XML element (<password>x</password>, <db:apiKey>x</db:apiKey>), a .NET setting
    # (<add key="ApiSecret" value="x"/>), a Ruby symbol (:password => "x").
    (
        ("</",),
        rf"<(?P<name>(?=[A-Za-z_])[\w.:-]{{0,60}}?{_HINT}[\w.:-]{{0,60}})(?:\s[^<>\n]{{0,200}})?>"
        r"(?P<value>[^<\n]{1,400})</(?P=name)>",
        "named",
    ),
    (("<add",), r'<add\s+key\s*=\s*"(?P<name>[^"\n]{1,80})"\s+value\s*=\s*"(?P<value>[^"\n]{1,400})"', "named"),
    (("=>",), rf"(?<![\w:]):(?P<name>\w{{0,60}}?{_HINT}\w{{0,60}})\s*=>\s*(?P<value>{_VALUE})", "named"),
    # A setting's name and value as a pair: an element's attributes (<property name="db.password"
    # value="x"/>, Java's <entry key="password">x</entry>), a Kubernetes or ECS container's environment
    # (- name: DB_PASSWORD then value: x, on the next line; {"name": "DB_PASSWORD", "value": "x"}).
    (
        ("value",),
        r'<[\w:.-]{1,40}\s+(?:name|key)\s*=\s*"(?P<name>[^"\n]{1,80})"\s+value\s*=\s*"(?P<value>[^"\n]{1,400})"',
        "named",
    ),
    (
        ('key="', 'name="'),
        r'<(?P<tag>[\w:.-]{1,40})\s+(?:name|key)\s*=\s*"(?P<name>[^"\n]{1,80})"\s*>(?P<value>[^<\n]{1,400})</(?P=tag)>',
        "named",
    ),
    (
        ("value",),
        rf"name:[ \t]*(?P<q>\\*[\"']?)(?P<name>[\w.-]{{1,80}})(?P=q)[ \t]*(?:\r?\n|\\n)[ \t]*value:[ \t]*(?P<value>{_VALUE})",
        "named",
    ),
    (
        ("value",),
        r'name(?<="name)\\*"[ \t]*:[ \t]*\\*"(?P<name>[\w.-]{1,80})\\*"[ \t]*,\s*\\*"value\\*"[ \t]*:[ \t]*'
        rf"(?P<value>{_VALUE})",
        "named",
    ),
    # A quoted flag of a secret's name, then its value, in a list of a command's arguments
    # (["--password", "x"], subprocess's argv); Windows' setx NAME x.
    (
        ('"--', "'--"),
        rf"--(?<=[\"']--)(?P<name>[\w.-]{{1,40}})\\*[\"'][ \t]*,[ \t]*(?![\\\"']*-)"
        rf"(?P<value>{_quoted(chr(34), 'dq')}|{_quoted(chr(39), 'sq')})",
        "named",
    ),
    (("setx",), rf"(?i:\bsetx)[ \t]+(?P<name>[\w.-]{{1,80}})[ \t]+(?P<value>{_VALUE})", "named"),
    # npm's, pnpm's and yarn's "config set NAME X" (//registry/:_authToken X, npmAuthToken X), and .npmrc's
    # _auth, a word no secret's name holds ("_auth=X", "npm config set _auth X"): a login and its password
    # in base64, so a value of base64 alone, both cases in it ("_auth = credentials" is code).
    (
        ("_auth", "npmauth", ":_password"),  # the names it masks: //registry/:_authToken, npmAuthToken
        rf"\b(?:npm|pnpm|yarn)(?:[ \t]+config)?[ \t]+set[ \t]+(?P<name>[^\s=\"']{{1,200}})[ \t]+(?P<value>{_VALUE})",
        "named",
    ),
    (
        ("_auth",),
        r"((?<![^\s:\"'])_auth[ \t]*=[ \t]*|\b(?:npm|pnpm|yarn)(?:[ \t]+config)?[ \t]+set[ \t]+"
        r"(?:[^\s=\"']{0,200}:)?_auth[ \t]+)"
        r"(\\*[\"']?(?=[a-z0-9+/]*[A-Z])(?=[A-Z+/]*[a-z0-9])[A-Za-z0-9+/]{8,}={0,2}\\*[\"']?)(?![\w+/=(.])",
        None,
    ),
    # A Wi-Fi network's QR code: WIFI:T:WPA;S:name;P:X;; (a ";" in X escaped with a backslash).
    (("wifi:",), r"(WIFI:(?:[^;\n]{0,100};){0,6}?P:)((?:\\.|[^;\\\n]){1,200})", r"\1" + MASK),
    # A password under the shortest names, as a JSON or a dict's key: {"pass": "x"}, {'pwd': 'x'}
    # (_mask_short_name: a path stays, as "pwd" is also the working directory).
    (
        ('"pass', "'pass", '"pw', "'pw"),
        rf"[\"'](?i:pass|pwd|pw)\\*[\"'][ \t]*:[ \t]*(?P<value>{_quoted(chr(34), 'dq')}|{_quoted(chr(39), 'sq')})",
        "short name",
    ),
    # A value a text says to use as a password: "use hunter22x as the password" (_mask_used_as).
    (
        ("as the pass", "as pass", "as my pass", "as your pass"),
        r"(?i)(\b(?:use|using|used|enter|entered|type|typed|with|pick|picked|chose|choose)[ \t]+)"
        r"(?P<value>`[^`\n]{1,200}`|\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"'`]{4,100})"
        r"([ \t]+as[ \t]+(?:(?:the|my|your|a)[ \t]+)?(?:pass(?:word|phrase|code)?|pass[ \t]+phrase|secret|pin)\b)",
        "used as",
    ),
    # A login and its password after one name: "creds: bob / hunter22x", "credentials: bob:hunter22x" (the
    # user stays; the password must look chosen as one: _mask_user_slash_password).
    (
        ("creds", "credential", "login", "логин", "учётк", "учетк"),
        r"(?i)(\b(?:creds|credentials?|login|логин|уч[её]тк[аи])(?:\\*[\"']?[ \t]*[:=]|[ \t]+(?:is|was))[ \t]*\\*[\"']?[^\s/:\"'\\,;]{1,80}(?:[ \t]*/[ \t]*|:))"
        r"(?=[^\s\"'\\,;]*[0-9!@#%^&*+=~?])(?P<value>[^\s\"'\\,;]{1,200})",
        "user / password",
    ),
    # The same under a pair of names, a login's and a password's: "логин/пароль admin/admin123",
    # "логин/пароль от роутера admin/admin123", "login/password for the NAS bob/hunter22x" (a ":" after the
    # password's name had the password rule mask both; without one, neither was).
    (
        ("/pass", "/ pass", "/pwd", "/ pwd", "/парол", "/ парол"),
        r"(?i)(\b(?:login|user(?:name)?|логин|пользователь)[ \t]*/[ \t]*(?:pass(?:word)?|pwd|пароль)"
        r"(?:[ \t]+(?:от|для|к|to|for|of)(?:[ \t]+[^\s/:\"'\\,;]{1,40}){1,3})?(?:[ \t]*[:=—–-])?[ \t]+[^\s/:\"'\\,;]{1,80}[ \t]*/[ \t]*)"
        r"(?=[^\s\"'\\,;]*[0-9!@#%^&*+=~?])(?P<value>[^\s\"'\\,;]{1,200})",
        "user / password",
    ),
    # Two-factor recovery codes ("recovery codes: 1234-5678 9012-3456"), each with a digit; a wallet's
    # seed phrase or mnemonic of 12 to 24 words.
    (
        ("recovery code", "backup code"),
        r"(?i)(\b(?:recovery|backup)[ \t]+codes?(?:[ \t]+(?:is|are|was|were))?[ \t]*:?[ \t]+)"
        r"((?=[A-Za-z0-9-]*[0-9])[A-Za-z0-9]{4,}(?:-[A-Za-z0-9]{3,})*"
        r"(?:[ \t]*,?[ \t]+(?=[A-Za-z0-9-]*[0-9])[A-Za-z0-9]{4,}(?:-[A-Za-z0-9]{3,})*)*)",
        r"\1" + MASK,
    ),
    (
        ("mnemonic", "seed phrase", "seed_phrase", "recovery phrase"),
        r"(?i)(\b(?:(?:seed|recovery|secret|backup|wallet)[ \t_-]*(?:phrase|words)|mnemonic(?:[ \t_-]*phrase)?)"
        r"\\*[\"']?(?:[ \t]*[:=][ \t]*|[ \t]+(?:is|was)[ \t]*:?[ \t]*)\\*[\"']?)([a-z]+(?:[ \t]+[a-z]+){11,23})\b",
        r"\1" + MASK,
    ),
    # The same in Russian prose: "пароль: x", "токен = x", "API-ключ: x", and Russian's word order
    # for "wifi password: x", the qualifier after the word ("пароль от почты: x", "токен для CI: x").
    (("парол", "токен", "секрет", "ключ", "кодов"), _RUSSIAN_ASSIGNMENT, "labelled"),
    # A secret stated in prose with "is" ("my password is hunter2", "the wifi password is 'correct horse
    # battery staple'"): a quoted value, or one word that holds a digit or a sign (_mask_stated), so
    # prose about a password stays ("the password is stored in the vault", "is 8 characters long").
    (_STATED_TRIGGERS, _STATED, "stated"),
    # "key: x", "ключ: x": no secret's name alone ("key: value", "key: the id of the row"), but a value shaped
    # as a key after it is one (_key_shaped): long, letters and digits mixed ("key: a8f3k2j9d8s7f6g5h4").
    (
        ("key:", "key =", "key=", "key :", "ключ:", "ключ =", "ключ=", "ключ :"),
        r"((?i:key|ключ)[ \t]*[:=][ \t]*)([A-Za-z0-9+/_\-]{16,200})(?=[.,;!?)]*(?:\s|\Z|\\[nrt\\\"]))",
        "key shaped",
    ),
    # A connection string's password (ADO.NET, ODBC, JDBC's SQL Server): "…;UID=sa;PWD=x;", "…;Password=a b;",
    # to the next ";", or ODBC's braces ("PWD={a;b}"); ODBC's short PWD was not a secret's name, a value of
    # several words kept all but its first, a braced one was read as code (_mask_connection_password).
    (
        (";pwd", "; pwd", ";password", "; password"),
        r"(?i:;[ \t]*(?:pwd|password)[ \t]*=[ \t]*)"
        r"(?P<value>\{(?:[^}\n]|\}\}){1,200}\}|[^;\s\"'\\{](?:[^;\n\"'\\]{0,200}?[^;\s\"'\\])?)"
        r"(?=[ \t]*(?:;|\\*[\"']|\r|\n|\Z))",
        "connection",
    ),
    # password=value, "api_key": "value", DB_PASSWORD_PROD=value, app.secret_key = value,
    # --password value: a name holding a secret word, then its value (see _mask_assignments).
    (("pass", "pw", "secret", "token", "key", "credential", "psk"), _ASSIGNMENT, "assignment"),
]


# Each rule's pattern, compiled on its first use: a pattern string handed to re.sub, re.compile or
# re.finditer is looked up in re's cache on every call (hashing a pattern of thousands of characters
# on its first call, then a dictionary's step), and that cache holds 512 patterns, fewer than a long
# session's other modules and this one's may ask of it, past which a rule is compiled again.
_RULE_PATTERNS = [_Lazy(pattern) for _, pattern, _ in _RULES]
