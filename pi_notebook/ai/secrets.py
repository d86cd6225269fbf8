"""What a secret looks like, and the one function that takes secrets out of outbound text.

Every text that leaves the runtime (a tool result on its way to the model, the panel, the
static HTML and ``text/plain`` of a finished run, plain mode, ``%agent history`` / ``events`` /
``status``, error texts, saved conversations, replay recordings) goes through :func:`redact`.
It replaces, and says what it replaced (``[redacted: GITHUB_TOKEN]``, ``[redacted: api key]``),
so a model is told a value was there instead of being handed a silent blank:

* the values of environment variables whose names look secret (:func:`is_secret_env_name`:
  ``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``-style names, hence
  the AWS / GCP / Azure ones, ``*_PAT``, connection strings, DSNs), also as ``repr`` or JSON
  escape them. Values seen once stay known for the life of the process, so a variable changed
  or deleted after it was read is still caught;
* known key shapes: ``sk-…`` (OpenAI, Anthropic, OpenRouter, DeepSeek), ``gsk_…``, ``xai-…``,
  GitHub ``ghp_…`` / ``github_pat_…``, GitLab ``glpat-…``, AWS ``AKIA…``, Hugging Face
  ``hf_…``, Slack ``xox…``, Google ``AIza…``, Stripe, npm, PyPI, ``Bearer …`` tokens,
  ``Authorization:`` values, JWTs, PEM private keys, the password in ``scheme://user:pw@host``;
* the value in ``name = value`` / ``"name": "value"`` when the name ends in a secret word
  (``api_key``, ``access_token``, ``client_secret``, ``password``, ``credentials``…), unless
  the value reads as code (``os.environ[...]``, ``config.token``, ``Optional[str]``).

Why hand-written: no maintained library does "find these shapes and these literal values,
fast, and label each" (secret scanners such as detect-secrets work on files and lines, and
report instead of replacing). Speed comes from one compiled expression of literal triggers
(the key prefixes, the secret words and the known secret values, as a trie, matched on the
lower-cased text), so a text with no trigger costs one ``lower()`` and one scan (~15 ms/MB);
each trigger found is then checked by a small anchored expression. The environment is
re-read on each call (names only, a few µs; the name test is memoised) and the trigger
expression rebuilt only when a secret value appears that was not known. Call it on whole
texts at boundaries, never per streamed token: a secret split across two deltas is only found
in the joined text.

This module must never log, print or keep a secret anywhere but in memory, and :func:`redact`
must be idempotent (its markers never match again), so redacting twice changes nothing more.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

#: The API-key variables of the built-in providers (``ai.providers.keys`` maps each provider to
#: its variable from this list); they are secret whatever the name rules say.
API_KEY_ENV_VARS: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "CEREBRAS_API_KEY",
    "GEMINI_API_KEY",
)

#: Shortest environment value treated as a secret (shorter ones are flags, ports, names).
MIN_SECRET_CHARS = 6
#: How many distinct secret values the process remembers (the oldest are forgotten first).
MAX_KNOWN_SECRETS = 512

# -- secret names ---------------------------------------------------------------------------------

# A name part equal to one of these makes an environment name secret ...
_SECRET_PARTS = frozenset(
    (
        "KEY",
        "KEYS",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWORDS",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "PAT",
        "DSN",
        "SAS",
    )
)
# ... and so does a part ending in one of these (APIKEY, AUTHTOKEN, DBPASSWORD, CLIENTSECRET).
_SECRET_ENDINGS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS")
_NAME_PARTS = re.compile(r"[^A-Z0-9]+")
_name_memo: dict[str, bool] = {}


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret (judged by the name).

    Parts are split on anything not a letter or digit: ``GITHUB_TOKEN``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``HF_TOKEN``, ``DB_PASSWORD``,
    ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_CLIENT_SECRET``, ``GITHUB_PAT``,
    ``SENTRY_DSN``, ``MY_APIKEY`` are secret; ``TOKENIZERS_PARALLELISM``, ``MAX_TOKENS``,
    ``SSL_CERT_FILE``, ``PWD`` are not.
    """
    known = _name_memo.get(name)
    if known is not None:
        return known
    upper = name.upper()
    parts = [p for p in _NAME_PARTS.split(upper) if p]
    secret = (
        upper in API_KEY_ENV_VARS
        or "CONNECTION_STRING" in upper
        or any(p in _SECRET_PARTS or p.endswith(_SECRET_ENDINGS) for p in parts)
    )
    if len(_name_memo) < 4096:
        _name_memo[name] = secret
    return secret


# -- shapes: a trigger (found in the lower-cased text) and the check at its position --------------

_WORD = re.compile(r"[A-Za-z0-9_]")
_NAME_CHAR = re.compile(r"[A-Za-z0-9_.-]")
_CODE_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")

# A check gets (text, trigger start, trigger end) and returns (end, replacement) or None.
Check = Callable[[str, int, int], "tuple[int, str] | None"]


def _marker(label: str) -> str:
    return f"[redacted: {label}]"


def _after_word(text: str, start: int) -> bool:
    """``start`` begins a word (``\\b`` before a word character)."""
    return start == 0 or _WORD.match(text, start - 1) is None


def _token(pattern: str, label: str) -> Check:
    """A key of one shape: ``pattern`` anchored at the trigger, which must begin a word."""
    compiled = re.compile(pattern)

    def check(text: str, start: int, end: int) -> tuple[int, str] | None:
        if not _after_word(text, start):
            return None
        match = compiled.match(text, start)
        return (match.end(), _marker(label)) if match else None

    return check


def _kept_prefix(pattern: str, label: str) -> Check:
    """Replace only the ``value`` group; the text before it (``Bearer ``, ``user:``) stays."""
    compiled = re.compile(pattern)

    def check(text: str, start: int, end: int) -> tuple[int, str] | None:
        match = compiled.match(text, start)
        if match is None:
            return None
        value_start, value_end = match.span("value")
        return value_end, text[start:value_start] + _marker(label)

    return check


_ASSIGNMENT = re.compile(
    r"(?P<word>(?i:key|token|secret|passwd|password|passphrase|credentials?))"
    r"\\?[\"']?[ \t]*[:=][ \t]*(?P<quote>\\?[\"']?)"
    r"(?P<value>[^\s\"'\\,;{}()\[\]<>`]{6,})"
)
_KEY_NAME_ENDINGS = ("api", "access", "secret", "private", "client", "account", "auth")


def _reads_as_code(value: str) -> bool:
    """A dotted path, or a snake_case / CamelCase name without digits: ``os.environ``,
    ``config.api_key``, ``default_token``, ``SecretStr`` (random keys carry digits)."""
    return (
        _CODE_VALUE.fullmatch(value) is not None
        and not any(ch.isdigit() for ch in value)
        and ("." in value or "_" in value or value[:1].isupper())
    )


def _assignment(text: str, start: int, end: int) -> tuple[int, str] | None:
    """``<name ending in a secret word> = value``: the value goes, the name stays."""
    match = _ASSIGNMENT.match(text, start)
    if match is None:
        return None
    begin = start
    while begin > max(0, start - 64) and _NAME_CHAR.match(text, begin - 1):
        begin -= 1
    name = text[begin : match.end("word")].strip("._-")
    if match.group("word").lower() == "key":  # a bare ``key`` is too common: api_key & co.
        head = name[: -len("key")].rstrip("_-").lower()
        if not head.endswith(_KEY_NAME_ENDINGS):
            return None
    value = match.group("value")
    value_start, value_end = match.span("value")
    if not match.group("quote"):
        following = text[value_end : value_end + 1]
        if len(value) < 8 or following in ("(", "[", ".") or _reads_as_code(value):
            return None
    return value_end, text[start:value_start] + _marker(name)


def _shape_checks() -> dict[str, Check]:
    checks: dict[str, Check] = {
        "-----begin": _token(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"
            r"(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*)",
            "private key",
        ),
        "eyj": _token(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", "JWT"),
        "github_pat_": _token(r"github_pat_[A-Za-z0-9_]{20,}", "GitHub token"),
        "glpat-": _token(r"glpat-[A-Za-z0-9_-]{20,}", "GitLab token"),
        "hf_": _token(r"hf_[A-Za-z0-9]{20,}", "Hugging Face token"),
        "xox": _token(r"xox[abposer]-[A-Za-z0-9-]{10,}", "Slack token"),
        "aiza": _token(r"AIza[0-9A-Za-z_-]{35}", "Google API key"),
        "npm_": _token(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", "npm token"),
        "pypi-": _token(r"pypi-[A-Za-z0-9_-]{50,}", "PyPI token"),
        "bearer": _kept_prefix(
            r"(?i:bearer)\s+(?P<value>[A-Za-z0-9\-._~+/]{16,}=*)", "bearer token"
        ),
        "authorization": _kept_prefix(
            r"(?i:authorization)\\?[\"']?\s*[:=]\s*\\?[\"']?"
            r"(?P<value>(?:(?i:basic|digest|token)\s+)?[^\s\"'\\,;\[\]]{8,})",
            "authorization",
        ),
        "://": _kept_prefix(r"://[^\s:/?#@\"'\[\]]+:(?P<value>[^\s@/?#\"'\[\]]+)@", "password"),
    }
    for prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        checks[prefix] = _token(r"gh[pousr]_[A-Za-z0-9]{20,}", "GitHub token")
    for prefix in ("sk_live_", "rk_live_", "sk_test_", "rk_test_"):
        checks[prefix] = _token(r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", "Stripe key")
    for prefix in ("akia", "asia", "abia", "acca"):
        checks[prefix] = _token(
            r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])", "AWS access key id"
        )
    # sk-… (OpenAI, Anthropic, OpenRouter, DeepSeek), gsk_ (Groq), xai- (xAI), r8_ (Replicate):
    # at least 16 characters and a digit, so prose like "sk-learn-compatible" is kept.
    for prefix in ("sk-", "gsk_", "xai-", "r8_"):
        checks[prefix] = _token(
            re.escape(prefix) + r"(?=[A-Za-z0-9_-]{16})(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]+",
            "api key",
        )
    for word in ("key", "token", "secret", "passw", "passphrase", "credential"):
        checks[word] = _assignment
    return checks


_SHAPE_CHECKS = _shape_checks()
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def _trie(words: Iterable[str]) -> str:
    """An alternation of literal ``words`` grouped by first character, longest first."""
    by_first: dict[str, list[str]] = {}
    for word in words:
        by_first.setdefault(word[0], []).append(word[1:])
    branches = []
    for first, rests in by_first.items():
        rests = sorted(set(rests), key=len, reverse=True)
        branches.append(re.escape(first) + "(?:" + "|".join(re.escape(r) for r in rests) + ")")
    return "|".join(branches)


def _forms(value: str) -> set[str]:
    """``value`` as it appears printed, repr'd or JSON-encoded (the escapes differ)."""
    forms = {value, repr(value)[1:-1], json.dumps(value)[1:-1]}
    forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
    return {f for f in forms if f}


class _Redactor:
    """The trigger expression, and the secret values it knows (lower-cased form -> forms)."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}  # value -> the variable it came from
        self.values: dict[str, list[tuple[str, str]]] = {}  # lowered form -> (form, label)
        self.shorter: dict[str, list[str]] = {}  # trigger -> the triggers it starts with
        self.seen: tuple[tuple[str, str], ...] = ()  # the secret variables last read
        self.lock = threading.Lock()
        self.trigger = self._compile()

    def _compile(self) -> re.Pattern[str]:
        values: dict[str, list[tuple[str, str]]] = {}
        for value, label in self.known.items():
            for form in _forms(value):
                # Under both lowerings sub() may use (they differ only off ASCII).
                for key in {form.lower(), form.translate(_ASCII_LOWER)}:
                    values.setdefault(key, []).append((form, label))
        for entries in values.values():
            entries.sort(key=lambda entry: len(entry[0]), reverse=True)
        words = [*_SHAPE_CHECKS, *values]
        # A secret value found lower-cased may not match in its case; the shorter triggers
        # at the same place (``sk-`` under ``sk-abc…``) are then tried in its stead.
        self.shorter = {
            long: sorted((w for w in words if w != long and long.startswith(w)), key=len)[::-1]
            for long in values
        }
        self.values = values
        return re.compile(_trie(words))

    def refresh(self) -> re.Pattern[str]:
        """The trigger expression, rebuilt when the environment holds a new secret value."""
        environ = os.environ
        current = tuple((n, environ.get(n, "")) for n in environ if is_secret_env_name(n))
        if current == self.seen:
            return self.trigger
        with self.lock:
            changed = False
            for name, raw in current:
                value = raw.strip()
                if len(value) >= MIN_SECRET_CHARS and value not in self.known:
                    self.known[value] = name
                    changed = True
            while len(self.known) > MAX_KNOWN_SECRETS:
                self.known.pop(next(iter(self.known)))
            if changed:
                self.trigger = self._compile()
            self.seen = current
            return self.trigger

    def sub(self, text: str) -> str:
        trigger = self.refresh()
        lowered = text.lower()
        if len(lowered) != len(text):  # e.g. "İ" lowers to two characters: keep positions
            lowered = text.translate(_ASCII_LOWER)
        out: list[str] = []
        done = 0  # text[:done] is settled
        search = trigger.search
        found = search(lowered)
        while found is not None:
            start = found.start()
            word = found.group()
            hit = self._check(text, start, word)
            if hit is None:
                for shorter in self.shorter.get(word, ()):
                    hit = self._check(text, start, shorter)
                    if hit is not None:
                        break
            if hit is None:
                found = search(lowered, start + 1)
                continue
            out.append(text[done:start])
            out.append(hit[1])
            done = hit[0]
            found = search(lowered, done)
        if not out:
            return text
        out.append(text[done:])
        return "".join(out)

    def _check(self, text: str, start: int, word: str) -> tuple[int, str] | None:
        """The secret starting at ``start`` that trigger ``word`` found there, if any."""
        entries = self.values.get(word)
        if entries is not None:
            for form, label in entries:
                if text.startswith(form, start):
                    return start + len(form), _marker(label)
        check = _SHAPE_CHECKS.get(word)
        return check(text, start, start + len(word)) if check is not None else None


_redactor = _Redactor()
_redactor.refresh()  # the environment as the process started: later deletions are caught too


def _explicit(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (and the pieces a library may print of one) masked."""
    forms: set[str] = set()
    for secret in secrets:
        if not secret or len(secret) < 4:
            continue
        forms |= _forms(secret)
        forms.add(repr(secret.encode("utf-8", "backslashreplace"))[2:-1])
        # A key with a control or non-ASCII character shows up cut at that character.
        piece: list[str] = []
        for ch in secret + "\0":
            if ch.isprintable() and ch.isascii():
                piece.append(ch)
                continue
            if len(piece) >= 6:
                forms.add("".join(piece))
            piece = []
    for form in sorted(forms, key=len, reverse=True):
        if form in text:
            text = text.replace(form, _marker("api key"))
    return text


def redact(text: str, also: Iterable[str] = ()) -> str:
    """``text`` with every secret replaced by a marker naming what was there.

    ``also`` adds secrets known to the caller (a key given in code, not in the environment);
    they are replaced in every form a library may print them in, as ``[redacted: api key]``.
    """
    if not text:
        return text
    if also:
        text = _explicit(text, also)
    return _redactor.sub(text)


#: Query parameters that carry credentials in URLs (Gemini's ``key``, signed URLs' ``sig``...).
_SECRET_PARAMS = frozenset(
    ("key", "api_key", "apikey", "token", "access_token", "auth", "sig", "signature", "secret",
     "password", "pass", "code", "session", "x-amz-signature", "x-amz-credential")
)  # fmt: skip


def redact_url(url: str) -> str:
    """``url`` fit to show in an error: no ``user:password@``, and the values of query
    parameters that look secret replaced (then :func:`redact` on the rest)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = "&".join(
        f"{name}=[redacted]"
        if value and (name.lower() in _SECRET_PARAMS or is_secret_env_name(name.upper()))
        else (f"{name}={value}" if value or "=" in pair else name)
        for pair in parts.query.split("&")
        if pair
        for name, _, value in [pair.partition("=")]
    )
    return redact(urlunsplit((parts.scheme, netloc, parts.path, query, "")))


def redact_data(value: Any) -> Any:
    """JSON-like data (dicts, lists, strings) with :func:`redact` applied to every string.

    Dict keys are kept; a value that is not a str, dict or list is returned as it is.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_data(item) for item in value]
    return value


__all__ = [
    "API_KEY_ENV_VARS",
    "MIN_SECRET_CHARS",
    "is_secret_env_name",
    "redact",
    "redact_data",
    "redact_url",
]
