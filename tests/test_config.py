"""Config.from_env: every setting, missing and wrong, gives a one-line error naming it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tgcheat.config import (
    DEFAULT_REDIS_PREFIX,
    Config,
    ConfigError,
    log_format_from_env,
    redact_url,
)
from tgcheat.store.games import KEY_PREFIX

TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
SECRET = "s3cret_-token"
GOOD = {
    "TELEGRAM_BOT_TOKEN": TOKEN,
    "WEBHOOK_URL": "https://cheat.example.com/telegram",
    "WEBHOOK_SECRET": SECRET,
}


def parse(need_webhook: bool = True, **overrides: str | None) -> Config:
    env = {**GOOD, **overrides}
    return Config.from_env(
        {k: v for k, v in env.items() if v is not None}, need_webhook=need_webhook
    )


def error_of(need_webhook: bool = True, **overrides: str | None) -> str:
    with pytest.raises(ConfigError) as info:
        parse(need_webhook, **overrides)
    message = str(info.value)
    assert "\n" not in message
    assert message.strip() == message and message
    return message


# --- good values --------------------------------------------------------------------------


def test_minimal_settings_for_polling() -> None:
    config = Config.from_env({"TELEGRAM_BOT_TOKEN": TOKEN}, need_webhook=False)
    assert config == Config(telegram_bot_token=TOKEN)
    assert config.redis_url is None
    assert config.webhook_url is None and config.webhook_secret is None
    assert config.port == 8080
    assert config.data_dir == "./data"
    assert config.redis_prefix == "tgc"
    assert config.base_url == "https://api.telegram.org/bot"
    assert config.base_file_url == "https://api.telegram.org/file/bot"
    assert not config.uses_local_bot_api


def test_all_settings() -> None:
    config = parse(
        REDIS_URL="rediss://user:pw@redis.example.com:6380/2",
        PORT="5000",
        TELEGRAM_API_BASE_URL="http://localhost:8081/bot",
        TGCHEAT_DATA_DIR="/var/lib/tgcheat",
        TGCHEAT_REDIS_PREFIX="cheat-2",
    )
    assert config.telegram_bot_token == TOKEN
    assert config.redis_url == "rediss://user:pw@redis.example.com:6380/2"
    assert config.webhook_url == "https://cheat.example.com/telegram"
    assert config.webhook_path == "/telegram"
    assert config.webhook_secret == SECRET
    assert config.port == 5000
    assert config.base_url == "http://localhost:8081/bot"
    assert config.base_file_url == "http://localhost:8081/file/bot"
    assert config.uses_local_bot_api
    assert config.data_dir == "/var/lib/tgcheat"
    assert config.redis_prefix == "cheat-2"


def test_the_default_redis_prefix_is_the_stores() -> None:
    assert DEFAULT_REDIS_PREFIX == KEY_PREFIX


@pytest.mark.parametrize("prefix", ["a", "tgc", "bot:cheat", "Cheat_2-b", "x" * 32])
def test_redis_prefix_good(prefix: str) -> None:
    assert parse(TGCHEAT_REDIS_PREFIX=prefix).redis_prefix == prefix


def test_config_is_frozen() -> None:
    config = parse()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.port = 1  # type: ignore[misc]


def test_repr_hides_secrets() -> None:
    text = repr(parse(REDIS_URL="redis://:hunter2@h:6379"))
    assert TOKEN not in text and SECRET not in text and "hunter2" not in text


def test_empty_or_blank_values_count_as_unset() -> None:
    config = parse(need_webhook=False, REDIS_URL="", PORT="  ", TGCHEAT_DATA_DIR="")
    assert config.redis_url is None and config.port == 8080 and config.data_dir == "./data"


def test_values_are_stripped() -> None:
    assert parse(TELEGRAM_BOT_TOKEN=f"  {TOKEN}\n").telegram_bot_token == TOKEN


def test_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("PORT", "9999")
    assert Config.from_env(need_webhook=False).port == 9999


@pytest.mark.parametrize(
    ("url", "path", "normalized"),
    [
        ("https://cheat.example.com", "/telegram", "https://cheat.example.com/telegram"),
        ("https://cheat.example.com/", "/telegram", "https://cheat.example.com/telegram"),
        ("https://cheat.example.com/hook/abc", "/hook/abc", "https://cheat.example.com/hook/abc"),
        ("https://cheat.example.com:8443/t", "/t", "https://cheat.example.com:8443/t"),
        ("https://cheat.example.com/t?x=1", "/t", "https://cheat.example.com/t?x=1"),
    ],
)
def test_webhook_url_path(url: str, path: str, normalized: str) -> None:
    config = parse(WEBHOOK_URL=url)
    assert config.webhook_path == path
    assert config.webhook_url == normalized


def test_webhook_is_optional_for_polling_but_checked_when_set() -> None:
    config = parse(need_webhook=False, WEBHOOK_URL=None, WEBHOOK_SECRET=None)
    assert config.webhook_url is None
    assert "WEBHOOK_URL" in error_of(need_webhook=False, WEBHOOK_URL="ftp://x")


def test_local_bot_api_server_allows_http_webhook_on_any_port() -> None:
    config = parse(
        TELEGRAM_API_BASE_URL="http://127.0.0.1:8081/bot",
        WEBHOOK_URL="http://127.0.0.1:5000/tg",
    )
    assert config.webhook_url == "http://127.0.0.1:5000/tg"


@pytest.mark.parametrize(
    ("given", "base_url", "base_file_url"),
    [
        ("http://localhost:8081/bot", "http://localhost:8081/bot", "http://localhost:8081/file/bot"),
        ("http://localhost:8081/bot/", "http://localhost:8081/bot", "http://localhost:8081/file/bot"),
        ("http://localhost:8081", "http://localhost:8081/bot", "http://localhost:8081/file/bot"),
        ("https://api.example.org/tg/bot", "https://api.example.org/tg/bot",
         "https://api.example.org/tg/file/bot"),
    ],
)  # fmt: skip
def test_api_base_url(given: str, base_url: str, base_file_url: str) -> None:
    config = parse(TELEGRAM_API_BASE_URL=given)
    assert config.base_url == base_url
    assert config.base_file_url == base_file_url


@pytest.mark.parametrize(
    "url",
    ["redis://localhost", "redis://:pw@localhost:6379/0", "rediss://h:6380", "unix:///run/r.sock"],
)
def test_redis_url_good(url: str) -> None:
    assert parse(REDIS_URL=url).redis_url == url


@pytest.mark.parametrize("port", ["1", "443", "65535"])
def test_port_good(port: str) -> None:
    assert parse(PORT=port).port == int(port)


@pytest.mark.parametrize("secret", ["a", "A-z_09", "x" * 256])
def test_webhook_secret_good(secret: str) -> None:
    assert parse(WEBHOOK_SECRET=secret).webhook_secret == secret


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
@pytest.mark.parametrize(
    "url", ["redis://node-1:6379", "rediss://:pw@node-1:6380/0", "redis://node-1/"]
)
def test_redis_cluster_on(value: str, url: str) -> None:
    config = parse(REDIS_CLUSTER=value, REDIS_URL=url)
    assert config.redis_cluster and config.redis_url == url


@pytest.mark.parametrize("value", [None, "", "0", "false", "No", "off"])
def test_redis_cluster_off(value: str | None) -> None:
    assert not parse(REDIS_CLUSTER=value, REDIS_URL="redis://localhost/3").redis_cluster
    assert not parse(REDIS_CLUSTER=value).redis_cluster  # the embedded Redis


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (None, "needs REDIS_URL naming a node of the cluster"),
        ("unix:///run/redis.sock", "not a unix socket"),
        ("redis://:hunter2@node-1:6379/2", "database 0 only, but REDIS_URL names database '2'"),
    ],
)
def test_redis_cluster_bad_combinations(url: str | None, said: str) -> None:
    message = error_of(REDIS_CLUSTER="1", REDIS_URL=url)
    assert message.startswith("REDIS_CLUSTER=1") and said in message
    assert "hunter2" not in message


# --- missing and wrong values ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["TELEGRAM_BOT_TOKEN", "WEBHOOK_URL", "WEBHOOK_SECRET"])
@pytest.mark.parametrize("value", [None, "", "   "])
def test_required_setting_missing(name: str, value: str | None) -> None:
    message = error_of(**{name: value})
    assert message.startswith(f"{name} is not set")


def test_missing_token_says_where_to_get_one() -> None:
    assert "@BotFather" in error_of(TELEGRAM_BOT_TOKEN=None)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TELEGRAM_BOT_TOKEN", "not-a-token"),
        ("TELEGRAM_BOT_TOKEN", "abc:def"),
        ("TELEGRAM_BOT_TOKEN", "123456:"),
        ("TELEGRAM_BOT_TOKEN", "123456:with space"),
        ("REDIS_URL", "http://localhost:6379"),
        ("REDIS_URL", "localhost:6379"),
        ("REDIS_URL", "redis://"),
        ("REDIS_URL", "redis://host:notaport"),
        ("REDIS_URL", "unix://"),
        ("WEBHOOK_URL", "http://cheat.example.com/telegram"),
        ("WEBHOOK_URL", "cheat.example.com/telegram"),
        ("WEBHOOK_URL", "https:///telegram"),
        ("WEBHOOK_URL", "https://cheat.example.com:8080/telegram"),
        ("WEBHOOK_URL", "https://cheat.example.com:99999/telegram"),
        ("WEBHOOK_URL", "https://cheat.example.com/telegram#x"),
        ("WEBHOOK_URL", "https://cheat.example.com/healthz"),
        ("WEBHOOK_SECRET", "has space"),
        ("WEBHOOK_SECRET", "dots.are.not.allowed"),
        ("WEBHOOK_SECRET", "é"),
        ("WEBHOOK_SECRET", "x" * 257),
        ("PORT", "http"),
        ("PORT", "0"),
        ("PORT", "65536"),
        ("PORT", "-1"),
        ("PORT", "80.5"),
        ("PORT", "٣"),  # a digit, but not an ASCII one
        ("TELEGRAM_API_BASE_URL", "localhost:8081/bot"),
        ("TELEGRAM_API_BASE_URL", "ftp://localhost/bot"),
        ("TELEGRAM_API_BASE_URL", "http://localhost:8081/api"),
        ("TELEGRAM_API_BASE_URL", "http://localhost:8081/bot?x=1"),
        ("TGCHEAT_REDIS_PREFIX", "two words"),
        ("TGCHEAT_REDIS_PREFIX", "x" * 33),
        ("TGCHEAT_REDIS_PREFIX", "tgc*"),
        ("TGCHEAT_REDIS_PREFIX", "chat{1}"),
        ("TGCHEAT_REDIS_PREFIX", "é"),
        ("REDIS_CLUSTER", "2"),
        ("REDIS_CLUSTER", "cluster"),
    ],
)
def test_wrong_value(name: str, value: str) -> None:
    message = error_of(**{name: value})
    assert message.startswith(name)


def test_data_dir_that_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("")
    assert error_of(TGCHEAT_DATA_DIR=str(file)).startswith("TGCHEAT_DATA_DIR")


@pytest.mark.parametrize("name", ["TELEGRAM_BOT_TOKEN", "WEBHOOK_SECRET"])
def test_errors_do_not_echo_secrets(name: str) -> None:
    value = "123456:has a secret" if name == "TELEGRAM_BOT_TOKEN" else "secret with spaces"
    assert value not in error_of(**{name: value})


def test_redis_url_error_hides_password() -> None:
    assert "hunter2" not in error_of(REDIS_URL="http://user:hunter2@localhost:6379")


def test_config_error_is_one_line() -> None:
    assert str(ConfigError("a\nb  c")) == "a b c"


def test_redact_url() -> None:
    assert redact_url("redis://u:pw@h:1/0") == "redis://u:***@h:1/0"
    assert redact_url("redis://:pw@h") == "redis://:***@h"
    assert redact_url("redis://h:1") == "redis://h:1"


def test_the_send_budget_is_telegrams_limit_unless_set() -> None:
    assert Config.from_env({"TELEGRAM_BOT_TOKEN": TOKEN}, need_webhook=False).send_rate == 30
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TGCHEAT_SEND_RATE": "0"}
    assert Config.from_env(env, need_webhook=False).send_rate == 0


@pytest.mark.parametrize("rate", ["-1", "fast", "nan", "inf"])
def test_a_send_budget_that_is_no_rate_is_refused(rate: str) -> None:
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "TGCHEAT_SEND_RATE": rate}
    with pytest.raises(ConfigError, match="TGCHEAT_SEND_RATE"):
        Config.from_env(env, need_webhook=False)


# --- metrics and logs ---------------------------------------------------------------------


def test_metrics_are_off_unless_asked() -> None:
    config = parse()
    assert config.metrics_token is None and config.metrics_port is None


def test_metrics_settings() -> None:
    token = "m" * 16
    config = parse(METRICS_TOKEN=token, METRICS_PORT="9100")
    assert config.metrics_token == token and config.metrics_port == 9100
    assert token not in repr(config)


@pytest.mark.parametrize("token", ["short", "with space-and-more-than-16", "é" * 20])
def test_bad_metrics_token_is_named_but_not_echoed(token: str) -> None:
    message = error_of(METRICS_TOKEN=token)
    assert "METRICS_TOKEN" in message and token not in message


@pytest.mark.parametrize("port", ["0", "70000", "x", "8080"])
def test_bad_metrics_port(port: str) -> None:
    assert "METRICS_PORT" in error_of(METRICS_PORT=port, PORT="8080")


def test_log_format() -> None:
    assert log_format_from_env({}) == "text"
    assert log_format_from_env({"LOG_FORMAT": "JSON"}) == "json"
    with pytest.raises(ConfigError, match="LOG_FORMAT"):
        log_format_from_env({"LOG_FORMAT": "xml"})
