"""The one redaction (``pi_notebook.ai.redact``): env secrets by name, key shapes, assignments."""

from __future__ import annotations

import json

import pytest

from pi_notebook.ai import (
    UserMessage,
    dump_transcript,
    faux_assistant_message,
    is_secret_env_name,
    parse_transcript,
    redact,
    redact_data,
    redact_url,
)

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
HF = "hf_" + "abcdefghijklmnopqrstuvwxyz0123"
DB_PASSWORD = "correct horse 42"


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.setenv("HF_TOKEN", HF)
    monkeypatch.setenv("DB_PASSWORD", DB_PASSWORD)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "falsefalse")
    monkeypatch.setenv("APP_MODE", "production-eu-1")


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SESSION_TOKEN",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "DB_PASSWORD",
        "PGPASSWORD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_API_KEY",
        "AZURE_CLIENT_SECRET",
        "AZURE_STORAGE_CONNECTION_STRING",
        "GITHUB_PAT",
        "SENTRY_DSN",
        "MY_APIKEY",
        "OPENAI_API_KEY",
        "slack_bot_token",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_env_name(name)


@pytest.mark.parametrize(
    "name", ["TOKENIZERS_PARALLELISM", "MAX_TOKENS", "SSL_CERT_FILE", "PWD", "PATH", "HOME"]
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_env_name(name)


def test_env_secrets_are_named_in_every_printed_form(secret_env: None) -> None:
    env = {"GITHUB_TOKEN": GITHUB, "AWS_SECRET_ACCESS_KEY": AWS_SECRET, "DB_PASSWORD": DB_PASSWORD}
    for text in (repr(env), json.dumps(env), str(list(env.values())), "\n".join(env.values())):
        out = redact(text)
        assert GITHUB not in out and AWS_SECRET not in out and DB_PASSWORD not in out
        assert "[redacted: GITHUB_TOKEN]" in out
        assert "[redacted: AWS_SECRET_ACCESS_KEY]" in out
        assert "[redacted: DB_PASSWORD]" in out
    # A repr escapes the backslash of a value; the escaped form is caught too.
    assert redact(repr({"HF_TOKEN": HF})) == "{'HF_TOKEN': '[redacted: HF_TOKEN]'}"
    # Not secrets: names that only look alike, and values of ordinary variables.
    assert redact("falsefalse production-eu-1") == "falsefalse production-eu-1"


def test_a_secret_deleted_after_it_was_seen_is_still_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "tok-9f8e7d6c5b4a")
    assert redact("x tok-9f8e7d6c5b4a") == "x [redacted: SERVICE_TOKEN]"
    monkeypatch.delenv("SERVICE_TOKEN")
    assert redact("x tok-9f8e7d6c5b4a") == "x [redacted: SERVICE_TOKEN]"
    monkeypatch.setenv("SERVICE_TOKEN", "tok-0000aaaa1111")  # changed: both values are known
    assert redact("tok-9f8e7d6c5b4a tok-0000aaaa1111").count("[redacted: SERVICE_TOKEN]") == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-proj-abc123def456ghi789jkl0.", "key [redacted: api key]."),
        ("ghp_" + "x" * 36, "[redacted: GitHub token]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijkl", "[redacted: GitHub token]"),
        ("id AKIAIOSFODNN7EXAMPLE ok", "id [redacted: AWS access key id] ok"),
        ("hf_abcdefghijklmnopqrstuvwxyz12345", "[redacted: Hugging Face token]"),
        ("xoxb-1234567890-abcdefghij", "[redacted: Slack token]"),
        ("AIza" + "B" * 35, "[redacted: Google API key]"),
        ("sk_live_" + "a1" * 12, "[redacted: Stripe key]"),
        ("glpat-abcdefghij0123456789", "[redacted: GitLab token]"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: [redacted: authorization]"),
        (
            "Authorization: Bearer abcdefghijklmnopq",
            "Authorization: Bearer [redacted: bearer token]",
        ),
        ("header Bearer abcdefghijklmnopqrstu", "header Bearer [redacted: bearer token]"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "[redacted: JWT]",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
            "-----END OPENSSH PRIVATE KEY-----",
            "[redacted: private key]",
        ),
        ("postgres://app:s3cr3t-pw@db:5432/x", "postgres://app:[redacted: password]@db:5432/x"),
        ('{"api_key": "abcdef12"}', '{"api_key": "[redacted: api_key]"}'),
        (
            "aws_secret_access_key = abc123XYZ789",
            "aws_secret_access_key = [redacted: aws_secret_access_key]",
        ),
        ("password='hunter22'", "password='[redacted: password]'"),
        ("CLIENT_SECRET: 7f3a9b2c1d", "CLIENT_SECRET: [redacted: CLIENT_SECRET]"),
    ],
)
def test_key_shapes_and_assignments(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "risk-assessment-framework-v2 and task-management-systems, apikey docs",
        "sk-learn-compatible-estimators-and-more",
        "api_key = os.environ['OPENAI_API_KEY']",
        "token = tokenizer_config",
        "password: Optional[str] = None",
        "max_tokens=4096, tokens: 12, key: 12345678",
        "the monkey: bananas1234",
        "df.groupby('key').sum()",
        "https://example.com/a:b@c",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent(secret_env: None) -> None:
    text = (
        f"GITHUB_TOKEN={GITHUB} Authorization: Basic dXNlcjpwYXNz api_key='{HF}' "
        "postgres://u:pw123456@h/db Bearer abcdefghijklmnopqrstuvwx sk-abc123def456ghi789jk"
    )
    once = redact(text)
    assert redact(once) == once
    assert GITHUB not in once and HF not in once and "pw123456" not in once


def test_explicit_secrets_in_every_form_a_library_prints() -> None:
    key = "sk-abc\n123456789"
    out = redact(f"b'Bearer {key!r}' and {key} and sk-abc and 123456789", also=[key])
    assert key not in out and "123456789" not in out and repr(key)[1:-1] not in out
    assert "[redacted: api key]" in out


def test_redact_data_walks_json(secret_env: None) -> None:
    data = {"role": "user", "content": [{"type": "text", "text": f"my token {GITHUB}"}], "n": 3}
    assert redact_data(data) == {
        "role": "user",
        "content": [{"type": "text", "text": "my token [redacted: GITHUB_TOKEN]"}],
        "n": 3,
    }


def test_non_ascii_text_keeps_positions(secret_env: None) -> None:
    text = f"İstanbul ß ключ {GITHUB} конец"  # "İ" lowers to two characters
    assert redact(text) == "İstanbul ß ключ [redacted: GITHUB_TOKEN] конец"


def test_a_saved_conversation_holds_no_secret(secret_env: None) -> None:
    messages = [
        UserMessage(content=f"use {GITHUB}"),
        faux_assistant_message(f"ok, {HF} noted", stop_reason="error", error_message=DB_PASSWORD),
    ]
    saved = json.dumps(dump_transcript(messages))
    assert GITHUB not in saved and HF not in saved and DB_PASSWORD not in saved
    loaded = parse_transcript(json.loads(saved))
    assert loaded[0].content == "use [redacted: GITHUB_TOKEN]"
    assert loaded[1].error_message == "[redacted: DB_PASSWORD]"


def test_a_key_that_only_matches_a_known_secret_lower_cased_is_still_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ABCdef1234567890XYZ")
    # Another key whose lower-cased text equals the known one's: the key shape still applies.
    assert redact("a sk-abcdef1234567890xyz b") == "a [redacted: api key] b"
    assert redact("a sk-ABCdef1234567890XYZ b") == "a [redacted: OPENAI_API_KEY] b"


def test_a_url_shown_in_an_error_keeps_the_server_and_loses_its_credentials() -> None:
    url = (
        "https://user:s3cret-pass@gateway.example.com:8443/v1beta/models/x:stream"
        "?alt=sse&key=AIzaSyA1234567890abcdefghijklmnopqrstu&X-Amz-Signature=abc123&n=2"
    )
    shown = redact_url(url)
    assert shown == (
        "https://gateway.example.com:8443/v1beta/models/x:stream"
        "?alt=sse&key=[redacted]&X-Amz-Signature=[redacted]&n=2"
    )
    assert redact_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
