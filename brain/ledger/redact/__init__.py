"""Mask secrets in text before a turn reaches the database.

Shapes covered: API keys by their prefix, which may follow ``_`` but no letter or digit
(OpenAI and Anthropic ``sk-…``, GitHub ``ghp_…``, ``github_pat_…`` and the other GitHub
prefixes, AWS ``AKIA…``, Slack ``xox?-…``, ``xapp-…`` and webhook URLs, Discord webhook URLs, Telegram bot tokens, Google ``AIza…`` and
``ya29.…``, Stripe ``sk_live_…``, ``rk_live_…`` and ``whsec_…`` (not the publishable
``pk_…``, public by design), Hugging Face ``hf_…`` and ``api_org_…``, GitLab ``glpat-…`` and its other
tokens (``GR1348941…`` too), npm ``npm_…``, Netlify ``nfp_…``, Vercel ``vcp_…`` (``vci_``, ``vca_``, ``vcr_``,
``vck_``), Notion ``ntn_…``, a Cloudflare Origin CA key ``v1.0-…``, PyPI ``pypi-Ag…``, SendGrid ``SG.….…``, DigitalOcean ``dop_v1_…``,
Shopify ``shpat_…``, age ``AGE-SECRET-KEY-1…``, Google OAuth client secrets ``GOCSPX-…``,
Databricks ``dapi…``, Heroku ``HRKU-…``, Docker Hub ``dckr_pat_…``, Supabase ``sbp_…``, New Relic
``NRAK-…``, Postman ``PMAK-…``, Pulumi ``pul-…``, Render ``rnd_…``, Sentry ``sntryu_…``, Tailscale ``tskey-…``,
Bitbucket ``ATBB…``, Mailgun ``key-…``, Alibaba Cloud ``LTAI…``, Azure AD client secrets ``…Q~…``),
JSON web tokens, a registry's login in Docker's config.json (``"auth": "<base64 of user:password>"``), a
signed URL's signature (an Azure SAS token's ``&sig=``, ``X-Amz-Signature=``, ``X-Goog-Signature=``, CloudFront's
``Signature=``), Authorization headers (bearer, basic, other schemes, a bare token), cookies (a ``Cookie:``
header's values, a ``Set-Cookie:``'s own, curl's ``--cookie``/``-b``), PEM and PGP private keys,
passwords in URLs (``scheme://user:X@host``, the user maybe empty, ``X`` running to the
last ``@`` a host follows, so an ``@`` or a ``/`` in it is masked too; a token as the user,
``https://X@github.com``: 32 letters and digits or more), secrets assigned to
a name (``key=value``, ``key: value``, ``"key": "value"``, ``--password x``, ``**Password:** x``, a YAML block
scalar ``key: |`` with the lines indented under it, a YAML value on the lines below its
``key:``, both in a file held as a JSON string too, or as JSON in one (escaped twice); a value of
several words on a YAML, INI or .env line (``password: correct horse``, ``secret = a b``,
``PASSWORD=a b`` unless a command or a question follows: ``PASSWORD=x make test``, ``PASSWORD=x what did
we decide``, _asks_after; see
_is_one_value for words of prose), on the lines below its key or going on over them
(``password:\\n  correct horse``, ``password: correct\\n  horse``, a quoted value over lines, ``Password:\\n**x**``), after a
YAML anchor or tag (``secret: &pw !!str x``) but for a tag naming a secret kept elsewhere
(``!secret name``, ``!env_var``, ``!Ref``: _REFERENCE_TAGS), a shell's single-quoted value with a
quote in it (``'it'\\''s'``); a password stated in prose, after a ``:`` (``the wifi password: correct
horse``, to the sentence's end) or ``is`` (``my password is hunter2``, a quoted value, or words with none of
prose: ``the password is correct horse battery staple``; _mask_stated), or straight after its name
(``user bob, password hunter22x``, ``my password's x``, ``pwd x``, ``pw: x``: one word with a letter and
a digit or a sign, so ``password reset link`` stays; in quotes or backticks, a letter, a digit and a sign); Russian
``пароль: x``, ``пароль от почты: x``, ``Пароль администратора — x``, ``Пароль базы данных: x``; and in XML,
.NET settings and Ruby symbols: ``<password>x</password>``, ``<add key="ApiSecret"
value="x"/>``, ``:password => x``), and the password options of command-line clients
(``mysql -pX``, ``curl -u user:X``, ``sshpass -p X``, ``redis-cli -a X``, ``aws configure
set …_key X``, ``openssl -pass pass:X``, ``keytool -storepass X``, ``docker login -p X``,
``echo X | docker login --password-stdin``, other clients' ``login -p X`` (``oc``, ``cf``, ``expo`` …),
``ngrok authtoken X``, what ``openssl passwd`` and ``mkpasswd`` hash, ``nmcli … password X``, a token or secret piped or given as a here-string to
commands that read one on stdin (``gh auth login --with-token <<< X``, ``echo X | gh secret set N``, ``wrangler
secret put``; ``--token <<< X``), ``mongo -p X``, ``sqlcmd -P X``, rclone's ``config create R s3 secret_access_key X``
(``pass X``, ``key X``), ``rclone obscure X`` and rclone.conf's ``pass = X``, every
``key=X`` of ``vault kv put`` and ``vault write``, what a command stores as a secret (``kubectl create secret …
--from-literal=K=X``, ``fly secrets set K=X``, ``doppler secrets set K X``, ``--secret-string X``, an SSM
SecureString's and ``az keyvault secret set``'s ``--value X``, ``mc alias set N URL ACCESS X``), MySQL's ``IDENTIFIED BY 'X'``, PostgreSQL's ``ALTER USER u WITH
PASSWORD 'X'`` (``CREATE ROLE``, SQL Server's ``CREATE LOGIN``, ``SET PASSWORD``), MongoDB's ``createUser({pwd: 'X'})``,
Redis's ``AUTH X``, ``requirepass X``,
``ssh-keygen -N X``, ``zip -P X``, ``7z -pX``, ``smbclient -U u%X``, ``az login -p X``, ``vault login X``, ``ldapsearch -w X``, Oracle's ``sqlplus u/X@db`` and ``jdbc:oracle:thin:u/X@h``,
``rabbitmqctl add_user u X``, ``net use Z: \\\\srv\\share /user:u X`` (or ``/u:u X``), ``htpasswd -b f u X``, ``echo X | sudo -S``, ``gh secret set N --body X``, ``npm config set …:_authToken X``, .npmrc's ``_auth=X``,
``ansible-vault encrypt_string X``, Python's ``auth=('u', 'X')``, ``wpa_passphrase SSID X``, a Wi-Fi QR
code's ``WIFI:T:WPA;S:net;P:X;;``; the key ``heroku auth:token`` printed alone on its line
below it (a UUID), what
``$ cat …/initialAdminPassword`` or ``$ echo $DB_PASSWORD`` printed on the line below: _PRINTED_SECRET), .netrc's ``machine H login U password X`` and
.pgpass's ``host:port:db:user:X``, a connection string's ``…;UID=sa;PWD=X;`` (to the next ``;``, ODBC's
``{…}`` whole); a name and its value as a pair (``- name: DB_PASSWORD`` then
``value: x``, ``{"name": …, "value": x}``, ``<property name="password" value="x"/>``), a quoted flag's
value in an argument list (``["--password", "x"]``), ``setx NAME x``, ``{"pass": "x"}``; in prose,
a passphrase after "is", a dash or its name alone, up to a clause's end (``the passphrase correct horse
battery staple``, ``… staple and the user is bob``), a secret named "secret" (``the secret is …``),
``use x as the password``, recovery codes, a seed phrase, Russian's ``пароль — синий кит плывёт``,
``кодовое слово: …``; a password named for what it opens then ``:`` (``password for root: x``, letters alone too: _stated_letters), in brackets,
in apposition or after a question (``the password (x)``, ``the admin password, x,`` or ``x.``, ``password? x``), after
its user (``creds: bob / x``, ``the admin login is admin/x``, ``Учётка: admin / x``), a security answer, a shell's default (``${DB_PASSWORD:-x}``: the brace
stays), a list of one (``password: ['x']``), R's ``password <- "x"``; in Russian, two words after a
dash (``секрет — синий кит``), a login's ``пароль`` (``логин bob, пароль синий кит``), ``пароль от wifi x``.
A placeholder (``N/A``, ``TBD``, ``<your password>``) is no secret, and a
table's column of secrets' names (``| Secret | Rotation |``) keeps them. The key name or prefix stays
so a reader knows what was there; the value becomes ``***``.

Which names hold a secret. A name is a run of letters, digits, ``_``, ``-`` and ``.``
(``DB_PASSWORD``, ``app.secret_key``, ``x-api-key``, ``clientSecret``) followed, on the
same line, by ``=``, ``:``, ``:=``, ``=>`` after a quoted name (not ``==`` nor ``::``), or
spaces after a command-line flag (``--db-pass x``). It is cut into words at ``_ - .``, at
digits and at camelCase humps; a leading ``self``/``this``/``cls`` and qualifiers at its
end (``PROD``, ``BASE``, ``V2``, digits: ``_QUALIFIERS``) are set aside, and the word left
last decides:

- a word ending in ``password``, ``passwd``, ``passphrase``, ``secret``, ``token``,
  ``credential(s)``, ``apikey``, ``psk`` (and the other ``_STRONG`` words): a secret, whatever comes
  before it (``PGPASSWORD``, ``GITHUB_TOKEN``, ``DB_PASSWORD_PROD``, ``secret_key_base``);
- ``pass``, ``pwd`` or ``pw`` as a whole word after another one: a secret (``DB_PASS``,
  ``SMTP_PWD``), unless that word says otherwise (``first_pass``: ``_NOT_PASSWORDS``);
- ``id`` after ``secret``: a secret (consul's ``SecretID``, Vault AppRole's ``secret_id``, ``VAULT_SECRET_ID``),
  unless the value is a secret's name (AWS's ``SecretId='prod/db'``, ``--secret-id prod/db``: _STORED_SECRET_NAME);
- ``key`` as a whole word after another one, unless that word names an ordinary kind of
  key (``primary_key``, ``sort_key``, ``cache_key``, ``public_key``: ``_NOT_SECRET_KEYS``):
  a secret when the name is in upper case, as environment variables are (``SECRET_KEY``,
  ``ENCRYPTION_KEY``, ``OPENAI_KEY``), or when one of its words names a credential
  (``api``, ``secret``, ``private``, ``signing``, …: ``_CREDENTIAL_KEYS``; ``apiKey``,
  ``app.secret_key``, ``x-api-key``); a lower-case ``result_key`` or ``self.key`` is the key
  of a dict or a table;
- anything else is not: ``key``, ``pass`` or ``token`` alone, plurals (``max_tokens``,
  ``secrets``), a secret word followed by another word (``password_length``,
  ``token_type``, ``secret_name``, ``api_key_id``), words that merely contain one
  (``keyboard``, ``monkey``, ``passport``, ``compass``, ``bypass``, ``OLDPWD``).

Quotes around the name and the value may be backslash-escaped, as in JSON inside a shell
string (``-d "{\\"password\\":\\"x\\"}"``); a quoted value ends at the quote that
opened it, escaped quotes inside it are part of it (``"a \\" b"``). A value that is a
``$VARIABLE``, already masked, a literal (``true``, ``None``, ``str``, an SQL ``?``:
``_LITERALS``, YAML's null ``~``), unquoted code (``getpass(…)``, ``os.environ[…]``, ``{…}``,
``std::env::var(…)``) or a reference to a secret kept elsewhere (``process.env.KEY``, ``settings.SECRET``,
``{{ vault_key }}``, ``<%= ENV['X'] %>``, ``%DB_PASS%``, a command's output in backticks) stays, and so does a comment where a value would be (``api_token:  # set in CI``: a ``#`` after a
space starts one in YAML, shell and .env).

Pieces of secrets are masked too, since a text may hold a key without its prefix: the body
of a private key without its BEGIN line, and any long token that looks like key material
(40+ characters of base64 with both cases and digits, and none of the words and structure
of a path or an identifier; a bare AWS secret key is one).

The package, one job a module, each importing only those before it and the standard library (so
bench/mask_compare.py can load another checkout's masker alone): patterns, the catalogue of rules
compiled where first used; rules, what each does with its match; triggers, which rules a text asks
for; here, ``redact`` and ``redact_value``. Each module more is a file more that every hook call
imports (~0.2 ms of CPU: bench/mask_import.py), hence four.
"""

from __future__ import annotations

from typing import Any

from .patterns import (
    _RULE_PATTERNS,
    _RULES,
)
from .rules import (
    _REPLACERS,
    _TABLE_DASH,
    _TABLE_HINT,
    _TOKEN_AT,
    _TOKEN_RUN,
    _mask_all_stated,
    _mask_assignments,
    _mask_labelled,
    _mask_next_line_values,
    _mask_pem_bodies,
    _mask_tables,
    _mask_token,
)
from .triggers import (
    _rules_to_run,
)

# The parts the tests read by these names (tests/test_hostile_costs.py, tests/test_ledger_redact.py)
# isort: off
from .rules import (
    _ESCAPED_LEAD as _ESCAPED_LEAD,
    _LINE_LEAD as _LINE_LEAD,
    _LIST_ITEM as _LIST_ITEM,
    _STATED_AT as _STATED_AT,
    _depth_of_run as _depth_of_run,
    _Fences as _Fences,
    _key_column as _key_column,
    _line_depth as _line_depth,
    _runs_to_line_end as _runs_to_line_end,
    _starts_line as _starts_line,
    _stated_at as _stated_at,
)
# isort: on


def redact(text: str) -> str:
    """``text`` with every secret shape masked."""
    for i in _rules_to_run(text.lower()):
        replacement, compiled = _RULES[i][2], _RULE_PATTERNS[i]
        if replacement == "assignment":
            if ":" in text:  # first: a comment after the key is taken for a value below
                text = _mask_next_line_values(text)
            text = _mask_assignments(text, compiled)
        elif replacement == "stated":
            text = _mask_all_stated(text)
        elif replacement == "labelled":  # a Russian label: its value on its line or below it
            if ":" in text:
                text = _mask_next_line_values(text, russian=True)
            text = compiled.sub(_mask_labelled, text)
        else:
            text = compiled.sub(_REPLACERS.get(replacement, replacement), text)
    if "|" in text and _TABLE_DASH.search(text) is not None and _TABLE_HINT.search(text) is not None:
        text = _mask_tables(text)
    if "-----END" in text:
        text = _mask_pem_bodies(text)
    if _TOKEN_RUN.search(text) is not None:  # a cheap test before the regex
        text = _TOKEN_AT.sub(_mask_token, text)
    return text


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value, a dict's keys too (before it is encoded)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    return value
