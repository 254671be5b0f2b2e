"""Settings from the environment, parsed once into a frozen value.

Every mode of the command line builds one `Config` with `Config.from_env` at start. A missing or
wrong setting raises `ConfigError` with a one-line message that names the variable, so the
command line can print it as is (no traceback) and the operator knows what to fix.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "DEFAULT_BASE_FILE_URL",
    "DEFAULT_BASE_URL",
    "DEFAULT_DATA_DIR",
    "DEFAULT_PORT",
    "DEFAULT_REDIS_PREFIX",
    "DEFAULT_SEND_RATE",
    "DEFAULT_WEBHOOK_PATH",
    "HEALTH_PATH",
    "METRICS_PATH",
    "Config",
    "ConfigError",
    "log_format_from_env",
    "redact_url",
]

DEFAULT_PORT = 8080
DEFAULT_WEBHOOK_PATH = "/telegram"
DEFAULT_DATA_DIR = "./data"
#: The store's own default (tgcheat.store.keys.KEY_PREFIX); config imports nothing of tgcheat.
DEFAULT_REDIS_PREFIX = "tgc"
#: The bot's budget across all chats: Telegram's limit, about 30 messages a second
#: (tgcheat.store.send_budget.TELEGRAM_SEND_RATE; config imports nothing of tgcheat).
DEFAULT_SEND_RATE = 30.0
DEFAULT_BASE_URL = "https://api.telegram.org/bot"
DEFAULT_BASE_FILE_URL = "https://api.telegram.org/file/bot"
# The web server answers the platform's health check here; the webhook must not take it.
HEALTH_PATH = "/healthz"
# Prometheus scrapes here (behind METRICS_TOKEN on PORT, or on METRICS_PORT).
METRICS_PATH = "/metrics"

# A token as @BotFather hands it out: the bot's numeric id, a colon, then the secret part.
_TOKEN_RE = re.compile(r"[0-9]+:[A-Za-z0-9_-]+")
# setWebhook's secret_token: "1-256 characters. Only characters A-Z, a-z, 0-9, _ and - are
# allowed" (Bot API).
_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{1,256}")
# setWebhook: "Ports currently supported for webhooks: 443, 80, 88, 8443" (Bot API); a local
# Bot API server accepts any port and plain http.
_WEBHOOK_PORTS = frozenset({443, 80, 88, 8443})
_REDIS_SCHEMES = ("redis", "rediss", "unix")
# REDIS_CLUSTER: a switch; these spellings only, anything else is a mistake worth naming.
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
# A key prefix that reads as one in every tool (no spaces, no glob characters for SCAN MATCH).
_REDIS_PREFIX_RE = re.compile(r"[A-Za-z0-9_:-]{1,32}")
_METRICS_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{16,256}")


class ConfigError(Exception):
    """A setting is missing or wrong. The message is one line that names the variable."""

    def __init__(self, message: str) -> None:
        # One line, always: the command line prints it after "tgcheat: ".
        super().__init__(" ".join(message.split()))


@dataclass(frozen=True, slots=True)
class Config:
    """Everything tgcheat reads from the environment.

    The bot builder takes `base_url` and `base_file_url` for python-telegram-bot; the web
    server takes `webhook_path`, `webhook_secret` and `port`; the Redis opener takes
    `redis_url`, `redis_cluster` and `data_dir`; the store takes `redis_prefix`.
    """

    telegram_bot_token: str
    """TELEGRAM_BOT_TOKEN: the bot's token from @BotFather. Never logged."""
    redis_url: str | None = None
    """REDIS_URL: redis://, rediss:// or unix:// URL; None = start an embedded Redis."""
    redis_cluster: bool = False
    """REDIS_CLUSTER: REDIS_URL names a node of a Redis Cluster (redis-py's cluster client)."""
    webhook_url: str | None = None
    """WEBHOOK_URL: the public URL Telegram posts updates to, with its path filled in."""
    webhook_secret: str | None = None
    """WEBHOOK_SECRET: Telegram sends it back in X-Telegram-Bot-Api-Secret-Token."""
    port: int = DEFAULT_PORT
    """PORT: the TCP port the web server listens on."""
    telegram_api_base_url: str | None = None
    """TELEGRAM_API_BASE_URL: a Bot API server other than Telegram's, ending in /bot."""
    data_dir: str = DEFAULT_DATA_DIR
    """TGCHEAT_DATA_DIR: where the embedded Redis keeps its files."""
    redis_prefix: str = DEFAULT_REDIS_PREFIX
    """TGCHEAT_REDIS_PREFIX: what the name of every key the bot keeps in Redis starts with."""
    send_rate: float = DEFAULT_SEND_RATE
    """TGCHEAT_SEND_RATE: the bot's budget of messages a second across all chats, shared by
    its processes (sends, edits and deletions; 30 by default, Telegram's limit; 0: none but
    Telegram's own 429s)."""
    metrics_token: str | None = None
    """METRICS_TOKEN: `GET /metrics` on the web server answers a request that carries it
    (``Authorization: Bearer <token>``); None: no /metrics on PORT."""
    metrics_port: int | None = None
    """METRICS_PORT: a port of its own for `GET /metrics` (serve and poll), for a private
    network; None: none."""

    @property
    def webhook_path(self) -> str:
        """The path the web server listens on: the path of WEBHOOK_URL."""
        if self.webhook_url is None:
            return DEFAULT_WEBHOOK_PATH
        return urlsplit(self.webhook_url).path or DEFAULT_WEBHOOK_PATH

    @property
    def app_url(self) -> str | None:
        """The Mini App's page (tgcheat.webapp): ``/app`` on WEBHOOK_URL's host. Telegram
        opens Mini Apps over https only."""
        if self.webhook_url is None or not self.webhook_url.startswith("https://"):
            return None
        parts = urlsplit(self.webhook_url)
        return urlunsplit((parts.scheme, parts.netloc, "/app", "", ""))

    @property
    def base_url(self) -> str:
        """python-telegram-bot's `base_url` (the token is appended to it)."""
        return self.telegram_api_base_url or DEFAULT_BASE_URL

    @property
    def base_file_url(self) -> str:
        """python-telegram-bot's `base_file_url`, derived from `base_url`."""
        if self.telegram_api_base_url is None:
            return DEFAULT_BASE_FILE_URL
        # _parse_api_base_url guarantees the trailing "/bot".
        return self.telegram_api_base_url[: -len("/bot")] + "/file/bot"

    @property
    def uses_local_bot_api(self) -> bool:
        """True when a Bot API server other than Telegram's is configured."""
        return self.telegram_api_base_url is not None

    def __repr__(self) -> str:
        # Keep the token and the webhook secret out of logs and tracebacks.
        redis_url = redact_url(self.redis_url) if self.redis_url else None
        return (
            f"Config(telegram_bot_token='***', redis_url={redis_url!r}, "
            f"webhook_url={self.webhook_url!r}, "
            f"webhook_secret={'***' if self.webhook_secret else None!r}, port={self.port!r}, "
            f"telegram_api_base_url={self.telegram_api_base_url!r}, "
            f"data_dir={self.data_dir!r}, redis_prefix={self.redis_prefix!r}, "
            f"redis_cluster={self.redis_cluster!r}, send_rate={self.send_rate!r}, "
            f"metrics_token={'***' if self.metrics_token else None!r}, "
            f"metrics_port={self.metrics_port!r})"
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ, *, need_webhook: bool) -> Config:
        """Parse the settings from `env` (default: `os.environ`).

        `need_webhook=True` (serve, set-webhook) makes WEBHOOK_URL and WEBHOOK_SECRET required.
        A variable set to the empty string counts as not set. Raises `ConfigError`.
        """

        def get(name: str) -> str | None:
            value = env.get(name)
            if value is None:
                return None
            value = value.strip()
            return value or None

        token = _parse_token(get("TELEGRAM_BOT_TOKEN"))
        redis_url = _parse_redis_url(get("REDIS_URL"))
        redis_cluster = _parse_redis_cluster(get("REDIS_CLUSTER"), redis_url)
        api_base_url = _parse_api_base_url(get("TELEGRAM_API_BASE_URL"))
        webhook_url = _parse_webhook_url(
            get("WEBHOOK_URL"), required=need_webhook, local_api=api_base_url is not None
        )
        webhook_secret = _parse_webhook_secret(get("WEBHOOK_SECRET"), required=need_webhook)
        port = _parse_port(get("PORT"))
        data_dir = _parse_data_dir(get("TGCHEAT_DATA_DIR"))
        redis_prefix = _parse_redis_prefix(get("TGCHEAT_REDIS_PREFIX"))
        send_rate = _parse_send_rate(get("TGCHEAT_SEND_RATE"))
        metrics_token = _parse_metrics_token(get("METRICS_TOKEN"))
        metrics_port = _parse_metrics_port(get("METRICS_PORT"), port)
        return cls(
            telegram_bot_token=token,
            redis_url=redis_url,
            redis_cluster=redis_cluster,
            webhook_url=webhook_url,
            webhook_secret=webhook_secret,
            port=port,
            telegram_api_base_url=api_base_url,
            data_dir=data_dir,
            redis_prefix=redis_prefix,
            send_rate=send_rate,
            metrics_token=metrics_token,
            metrics_port=metrics_port,
        )


def log_format_from_env(env: Mapping[str, str] = os.environ) -> str:
    """LOG_FORMAT: ``text`` (the default, for a person) or ``json`` (a line a record, for a
    log platform)."""
    value = (env.get("LOG_FORMAT") or "").strip().lower() or "text"
    if value not in ("text", "json"):
        raise ConfigError(f"LOG_FORMAT must be text or json, got {value!r}")
    return value


def _parse_metrics_token(value: str | None) -> str | None:
    if value is None:
        return None
    if not _METRICS_TOKEN_RE.fullmatch(value):
        # The value is a secret: never echo it.
        raise ConfigError(
            "METRICS_TOKEN must be 16-256 characters of A-Z a-z 0-9 _ - (make one with "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return value


def _parse_metrics_port(value: str | None, port: int) -> int | None:
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= 65535:
        raise ConfigError(f"METRICS_PORT must be a whole number from 1 to 65535, got {value!r}")
    if int(value) == port:
        raise ConfigError(f"METRICS_PORT must differ from PORT ({port}): it is a port of its own")
    return int(value)


def _parse_send_rate(value: str | None) -> float:
    if value is None:
        return DEFAULT_SEND_RATE
    try:
        rate = float(value)
    except ValueError:
        rate = -1.0
    if not math.isfinite(rate) or rate < 0:
        raise ConfigError(
            f"TGCHEAT_SEND_RATE must be a number of messages a second, 0 or more (0: no "
            f"budget), got {value!r}"
        )
    return rate


def _parse_token(value: str | None) -> str:
    if value is None:
        raise ConfigError("TELEGRAM_BOT_TOKEN is not set: get a token from @BotFather (/newbot)")
    if not _TOKEN_RE.fullmatch(value):
        # The value is a secret: never echo it.
        raise ConfigError(
            "TELEGRAM_BOT_TOKEN does not look like a bot token: expected <digits>:<secret>, "
            "as @BotFather gives it"
        )
    return value


def _parse_redis_url(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in _REDIS_SCHEMES:
        raise ConfigError(
            f"REDIS_URL must start with redis://, rediss:// or unix://, got {redact_url(value)!r}"
        )
    if parts.scheme == "unix":
        if not parts.path:
            raise ConfigError("REDIS_URL unix:// needs a socket path, e.g. unix:///run/redis.sock")
    elif not parts.hostname:
        raise ConfigError(f"REDIS_URL has no host: {redact_url(value)!r}")
    else:
        try:
            _ = parts.port  # urlsplit checks the port only when it is read
        except ValueError:
            raise ConfigError(f"REDIS_URL has a bad port: {redact_url(value)!r}") from None
    return value


def _parse_redis_cluster(value: str | None, redis_url: str | None) -> bool:
    if value is None or value.lower() in _FALSE:
        return False
    if value.lower() not in _TRUE:
        raise ConfigError(f"REDIS_CLUSTER must be 1 (a Redis Cluster) or 0, got {value!r}")
    if redis_url is None:
        raise ConfigError(
            "REDIS_CLUSTER=1 needs REDIS_URL naming a node of the cluster, e.g. "
            "redis://cluster-node-1:6379 (the embedded Redis is not a cluster)"
        )
    parts = urlsplit(redis_url)
    if parts.scheme == "unix":
        raise ConfigError(
            "REDIS_CLUSTER=1 needs a redis:// or rediss:// REDIS_URL: the cluster client "
            "reaches the nodes over TCP, not a unix socket"
        )
    database = parts.path.strip("/")
    if database not in ("", "0"):
        raise ConfigError(
            f"REDIS_CLUSTER=1: a Redis Cluster has database 0 only, but REDIS_URL names "
            f"database {database!r}: drop the /{database} from it"
        )
    return True


def _parse_api_base_url(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"TELEGRAM_API_BASE_URL must be an http(s) URL like http://localhost:8081/bot, "
            f"got {value!r}"
        )
    if parts.query or parts.fragment:
        raise ConfigError(f"TELEGRAM_API_BASE_URL must not have a query or fragment, got {value!r}")
    path = parts.path.rstrip("/")
    if not path:
        path = "/bot"  # a server's root was given: the Bot API lives under /bot<token>
    if not path.endswith("/bot"):
        raise ConfigError(
            f"TELEGRAM_API_BASE_URL must end with /bot (the token is appended to it), "
            f"e.g. http://localhost:8081/bot, got {value!r}"
        )
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _parse_webhook_url(value: str | None, *, required: bool, local_api: bool) -> str | None:
    if value is None:
        if required:
            raise ConfigError(
                "WEBHOOK_URL is not set: give the public https URL Telegram should post "
                "updates to, e.g. https://example.com/telegram"
            )
        return None
    parts = urlsplit(value)
    # A local Bot API server may call plain http on any port (Bot API, "Using a Local Bot API
    # Server"); Telegram's own servers need https.
    schemes = ("http", "https") if local_api else ("https",)
    if parts.scheme not in schemes or not parts.hostname:
        raise ConfigError(
            f"WEBHOOK_URL must be an https URL like https://example.com/telegram, got {value!r}"
        )
    if parts.fragment:
        raise ConfigError(f"WEBHOOK_URL must not have a #fragment, got {value!r}")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"WEBHOOK_URL has a bad port, got {value!r}") from None
    if port is not None and port not in _WEBHOOK_PORTS and not local_api:
        raise ConfigError(
            f"WEBHOOK_URL port must be 443, 80, 88 or 8443 (Telegram allows only these), got {port}"
        )
    path = parts.path
    if path in ("", "/"):
        path = DEFAULT_WEBHOOK_PATH
    if path.rstrip("/") == HEALTH_PATH:
        raise ConfigError(f"WEBHOOK_URL path must not be {HEALTH_PATH}: the health check uses it")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _parse_webhook_secret(value: str | None, *, required: bool) -> str | None:
    if value is None:
        if required:
            raise ConfigError(
                "WEBHOOK_SECRET is not set: choose 1-256 characters of A-Z a-z 0-9 _ -, "
                "e.g. the output of: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        return None
    if not _SECRET_RE.fullmatch(value):
        # The value is a secret: say what is wrong without echoing it.
        raise ConfigError(
            f"WEBHOOK_SECRET must be 1-256 characters of A-Z a-z 0-9 _ - (Telegram's rule); "
            f"the value set has {len(value)} characters"
        )
    return value


def _parse_port(value: str | None) -> int:
    if value is None:
        return DEFAULT_PORT
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= 65535:
        raise ConfigError(f"PORT must be a whole number from 1 to 65535, got {value!r}")
    return int(value)


def _parse_data_dir(value: str | None) -> str:
    if value is None:
        return DEFAULT_DATA_DIR
    if os.path.exists(value) and not os.path.isdir(value):
        raise ConfigError(f"TGCHEAT_DATA_DIR must be a directory, {value!r} is a file")
    return value


def _parse_redis_prefix(value: str | None) -> str:
    if value is None:
        return DEFAULT_REDIS_PREFIX
    if not _REDIS_PREFIX_RE.fullmatch(value):
        raise ConfigError(
            f"TGCHEAT_REDIS_PREFIX must be 1-32 characters of A-Z a-z 0-9 _ - :, got {value!r}"
        )
    return value


def redact_url(url: str) -> str:
    """`url` with its password (if any) replaced by ***, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
