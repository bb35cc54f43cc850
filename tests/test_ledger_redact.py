"""Every secret shape is masked; ordinary prose and code survive."""

from __future__ import annotations

import pytest

from brain.ledger.redact import redact, redact_value

# (text with a secret, the secret that must vanish, what must remain)
SECRETS = [
    (
        "export ANTHROPIC_API_KEY=sk-ant-api03-Abc123Def456Ghi789Jkl012",
        "Abc123Def456Ghi789",
        "ANTHROPIC_API_KEY=",
    ),
    ("the key is sk-proj-AbCdEfGhIjKlMnOpQrStUv12 ok", "AbCdEfGhIjKlMnOpQrStUv12", "sk-proj-***"),
    ("openai sk-abcdefghijklmnopqrstuvwxyz123456", "abcdefghijklmnopqrstuvwxyz123456", "sk-***"),
    (
        "git push https://ghp_1234567890abcdefghijABCDEFGHIJ123456@github.com/o/r",
        "1234567890abcdefghij",
        "ghp_***",
    ),
    ("GH_TOKEN=gho_1234567890abcdefghijABCDEFGHIJ123456", "1234567890abcdefghij", "GH_TOKEN="),
    (
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "11ABCDEFG0123456789",
        "github_pat_***",
    ),
    ("aws AKIAIOSFODNN7EXAMPLE here", "IOSFODNN7EXAMPLE", "AKIA***"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI",
        "aws_secret_access_key = ***",
    ),
    (
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig' https://api",
        "eyJhbGciOiJIUzI1NiJ9",
        "Bearer ***",
    ),
    ('curl -H "Authorization: Basic dXNlcjpodW50ZXIy" x', "dXNlcjpodW50ZXIy", "Basic ***"),
    ("token in prose: Bearer abc123def456ghi789", "abc123def456ghi789", "Bearer ***"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAxyz\nQWERTY\n-----END RSA PRIVATE KEY-----\nafter",
        "MIIEowIBAAKCAQEAxyz",
        "-----BEGIN RSA PRIVATE KEY----- *** -----END RSA PRIVATE KEY-----\nafter",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA (clipped",
        "b3BlbnNzaC1rZXkt",
        "OPENSSH PRIVATE KEY",
    ),
    (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
        "MIIEvQIBADAN",
        "BEGIN PRIVATE KEY",
    ),
    ("mysql -u root --password=hunter2 db", "hunter2", "--password=***"),
    ("psql --password 'correct horse' db", "correct horse", "--password '***'"),
    ("./deploy --api-key abc123xyz", "abc123xyz", "--api-key ***"),
    ("DB_PASSWORD=s3cr3t PGPASSWORD=other psql", "s3cr3t", "DB_PASSWORD=***"),
    ("DB_PASSWORD=s3cr3t PGPASSWORD=other psql", "other", "PGPASSWORD=***"),
    (
        'settings {"password": "hunter2", "user": "bob"}',
        "hunter2",
        '"password": "***", "user": "bob"',
    ),
    ("client_secret: 9f8e7d6c5b4a", "9f8e7d6c5b4a", "client_secret: ***"),
    ("psql postgres://bob:hunter2@db.local/app", "hunter2", "postgres://bob:***@db.local/app"),
    ("slack xoxb-123456789012-abcdefghijkl", "123456789012-abcdefghijkl", "xoxb-***"),
    ("google AIzaSyA1234567890abcdefghijklmnopqrstuv", "SyA1234567890abcdefghij", "AIza***"),
]


@pytest.mark.parametrize("text, secret, kept", SECRETS)
def test_secret_is_masked(text, secret, kept):
    masked = redact(text)
    assert secret not in masked
    assert kept in masked
    assert redact(masked) == masked  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "The token expiration is handled by basic functionality; max_tokens=100",
        "bearer authentication is described in RFC 6750",
        "I'll use the task-management module; disk-usage is fine",
        "password=$DB_PASSWORD is read from the environment",
        "Set the password in the settings dialog.",
        "ask for it with getpass()",
        "sk-short",
    ],
)
def test_prose_and_references_survive(text):
    assert redact(text) == text


def test_redact_value_walks_json_like_values():
    row = {
        "commands": ["curl -H 'Authorization: Bearer abc.def.ghi123456'", "ls"],
        "tools": {"Bash": 2},
        "tool_errors": [{"tool": "Bash", "error": "bad key sk-ant-api03-0123456789abcdefghij"}],
        "byte_end": 10,
    }
    out = redact_value(row)
    assert out["commands"] == ["curl -H 'Authorization: Bearer ***'", "ls"]
    assert out["tools"] == {"Bash": 2} and out["byte_end"] == 10
    assert out["tool_errors"][0]["error"] == "bad key sk-ant-***"
