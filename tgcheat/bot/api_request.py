"""A Bot API request whose parameters are already plain JSON values, handed straight to the HTTP
client python-telegram-bot uses (the bot's ``BaseRequest``: the same connection pool and
timeouts as its own requests).

Why not through python-telegram-bot's ``Bot``: the bot's own messages (sends, edits, deletes,
button answers) are most of what a play costs. ``benchmarks/request_paths.py`` measures the
bot's side of one request against an offline HTTP client; there, an edit of a hand with its
keyboard costs about 10 µs this way, 150 µs through ``Bot.do_api_request`` and 1.3 ms through
``Bot.edit_message_text``:

- ``Bot``'s methods take python-telegram-bot's objects (the keyboard's buttons built, then
  turned back into dicts), insert defaults, and build the answer into its objects (a message
  comes back whole, keyboard and all, and the bot never reads it);
- ``Bot.do_api_request`` takes plain JSON values, but still wraps every parameter, encodes
  it with the standard library's JSON and decodes every answer whole; it warns on every call
  to a method ``Bot`` has a method of its own for (all of these), and on the application's
  ``ExtBot`` it goes through the ``AIORateLimiter``, whose retries would stack on the
  ``Sender``'s own.

How, with python-telegram-bot's public API only: ``BaseRequest.do_request(url, method,
request_data)`` is the documented interface of its HTTP clients, and takes a ``RequestData``.
python-telegram-bot builds those from a class of a private module; its documentation calls how
a ``RequestData`` is created an implementation detail, and its documented attributes,
properties and methods all anyone may rely on, an HTTP client included (``HTTPXRequest`` reads
``json_parameters`` and ``multipart_data``). So the request data here is
``EncodedParameters``: exactly those members, over the parameters encoded once with orjson (a
string as it is, anything else as JSON: the Bot API's form encoding, as python-telegram-bot
does it). It goes to ``do_request`` as a ``RequestData`` by a cast, the one place that stands
in for the library's type; ``tests/bot/test_api_request.py`` checks that it has every public
member ``RequestData`` has, and that a real ``HTTPXRequest`` sends for it what it sends for
``Bot``'s own request.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlencode

import orjson
from telegram.error import NetworkError, TelegramError
from telegram.request import BaseRequest, RequestData

from tgcheat.metrics import BOT_API_REQUESTS, api_result, method_label

JsonParams = dict[str, Any]


class EncodedParameters:
    """The parameters of one request, as ``RequestData``'s public members present them. A
    parameter that is None is left out, as python-telegram-bot leaves it out."""

    __slots__ = ("_encoded", "_values")

    #: Nothing is uploaded: every parameter is a value.
    contains_files = False

    def __init__(self, params: JsonParams) -> None:
        self._values = params
        self._encoded = {
            name: value if isinstance(value, str) else orjson.dumps(value).decode()
            for name, value in params.items()
            if value is not None
        }

    @property
    def parameters(self) -> JsonParams:
        return {name: value for name, value in self._values.items() if value is not None}

    @property
    def json_parameters(self) -> dict[str, str]:
        """Each parameter as the form encoding sends it: a string as it is, else its JSON."""
        return self._encoded

    def url_encoded_parameters(self, encode_kwargs: dict[str, Any] | None = None) -> str:
        return urlencode(self._encoded, **(encode_kwargs or {}))

    def parametrized_url(self, url: str, encode_kwargs: dict[str, Any] | None = None) -> str:
        return f"{url}?{self.url_encoded_parameters(encode_kwargs)}"

    @property
    def json_payload(self) -> bytes:
        # As RequestData's: a JSON object of the encoded parameters.
        return orjson.dumps(self._encoded)

    @property
    def multipart_data(self) -> dict[str, Any]:
        return {}


async def post(request: BaseRequest, url: str, params: JsonParams) -> tuple[int, bytes]:
    """POST the parameters to the Bot API URL; Telegram's HTTP status and body. An error of the
    HTTP client that is not python-telegram-bot's own becomes a NetworkError, as in
    ``BaseRequest.post``."""
    request_data = cast(RequestData, EncodedParameters(params))
    method = method_label(url.rsplit("/", 1)[-1])
    try:
        code, payload = await request.do_request(url, "POST", request_data=request_data)
    except TelegramError:
        BOT_API_REQUESTS.labels(method, "network").inc()
        raise
    except Exception as error:
        BOT_API_REQUESTS.labels(method, "network").inc()
        raise NetworkError(f"Unknown error in HTTP implementation: {error!r}") from error
    BOT_API_REQUESTS.labels(method, api_result(code)).inc()
    return code, payload
