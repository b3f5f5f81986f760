"""The two kinds of player: a person (code from the editor) and a chat model behind any
OpenAI-compatible endpoint (the Hugging Face router by default).

Prompt building and reply parsing are inference.py's (environment.agent), so a model plays
the same game here as in the baseline run. The token is an argument of each call only: it is
never stored, rendered, logged or exported.
"""
from __future__ import annotations

from urllib.parse import urlparse
import time
from dataclasses import dataclass
from typing import Callable, Optional, Union

from environment.config import setting
from environment.driver import submission_of
from environment.trajectory import StepRecord, configured_secrets, scrub
from ui.session import EpisodeHandle, PlayError

ROUTER_URL = "https://router.huggingface.co/v1"
DEFAULT_MODELS = (
    "Qwen/Qwen2.5-Coder-32B-Instruct",
    "Qwen/Qwen2.5-72B-Instruct",
    "Qwen/Qwen3-Coder-480B-A35B-Instruct",
    "meta-llama/Llama-3.3-70B-Instruct",
    "deepseek-ai/DeepSeek-V3-0324",
    "openai/gpt-oss-120b",
)
MODEL_TIMEOUT_S = float(setting("KERNEL_PLAYGROUND_MODEL_TIMEOUT_S"))


@dataclass(frozen=True)
class ModelSettings:
    model: str
    base_url: str = ROUTER_URL
    temperature: float = 0.2
    max_tokens: int = 2048
    timeout_s: float = MODEL_TIMEOUT_S

    @classmethod
    def checked(cls, model: Optional[str], base_url: Optional[str], temperature: Optional[float],
                max_tokens: Optional[float], timeout_s: float = MODEL_TIMEOUT_S) -> "ModelSettings":
        model = (model or "").strip()
        if not model:
            raise PlayError("choose a model id (e.g. Qwen/Qwen2.5-Coder-32B-Instruct)")
        base_url = (base_url or "").strip() or ROUTER_URL
        if not base_url.startswith(("http://", "https://")):
            raise PlayError(f"the API base URL must start with http:// or https://, got {base_url!r}")
        try:
            temperature = float(temperature if temperature is not None else 0.2)
            max_tokens = int(max_tokens if max_tokens is not None else 2048)
        except (TypeError, ValueError):
            raise PlayError("temperature and max tokens must be numbers") from None
        if not 0.0 <= temperature <= 2.0:
            raise PlayError(f"temperature must be between 0 and 2, got {temperature}")
        if not 16 <= max_tokens <= 32768:
            raise PlayError(f"max tokens must be between 16 and 32768, got {max_tokens}")
        return cls(model=model, base_url=base_url.rstrip("/"), temperature=temperature, max_tokens=max_tokens,
                   timeout_s=timeout_s)


@dataclass(frozen=True)
class Reply:
    text: Optional[str]
    error: Optional[str]
    latency_ms: float


def resolve_token(typed: Optional[str], base_url: Optional[str] = None) -> Optional[str]:
    """The token typed in the page, else the Space's own HF_TOKEN secret, but the secret only
    for the Hugging Face router: a visitor who points the base URL at their own server must not
    receive the Space owner's token in the Authorization header."""
    typed = (typed or "").strip()
    if typed:
        return typed
    host = urlparse((base_url or ROUTER_URL).strip() or ROUTER_URL).hostname
    return setting("HF_TOKEN") or None if host == urlparse(ROUTER_URL).hostname else None


def typed_token(typed: Optional[str]) -> Optional[str]:
    """Only what the visitor typed: pushing to the Hub never uses the Space owner's token."""
    return (typed or "").strip() or None


def complete(settings: ModelSettings, token: Optional[str], messages: list[dict[str, str]]) -> Reply:
    """One chat completion; every failure becomes a Reply with a clear, token-free error."""
    from openai import (APIConnectionError, APIStatusError, APITimeoutError, AuthenticationError, NotFoundError,
                        OpenAI)

    secrets = configured_secrets([token])
    t0 = time.monotonic()
    try:
        client = OpenAI(base_url=settings.base_url, api_key=token or "no-token", timeout=settings.timeout_s,
                        max_retries=0)
        response = client.chat.completions.create(model=settings.model, messages=messages,
                                                  temperature=settings.temperature, max_tokens=settings.max_tokens)
    except APITimeoutError:
        return Reply(None, f"the model did not answer within {settings.timeout_s:.0f} s", _ms(t0))
    except AuthenticationError:
        return Reply(None, "the endpoint refused the token (HTTP 401): check the token field", _ms(t0))
    except NotFoundError as e:
        return Reply(None, f"model {settings.model!r} not found at {settings.base_url} (HTTP 404): "
                     f"{scrub(_msg(e), secrets)}", _ms(t0))
    except APIConnectionError:
        return Reply(None, f"cannot reach {settings.base_url}: check the API base URL", _ms(t0))
    except APIStatusError as e:
        return Reply(None, f"the endpoint answered HTTP {e.status_code}: {scrub(_msg(e), secrets)}", _ms(t0))
    except Exception as e:  # malformed responses and the like: one line, never a traceback
        return Reply(None, f"model call failed: {type(e).__name__}: {scrub(_msg(e), secrets)}", _ms(t0))
    choice = response.choices[0] if getattr(response, "choices", None) else None
    text = choice.message.content if choice is not None and choice.message is not None else None
    if not text:
        reason = choice.finish_reason if choice is not None else "no choices"
        return Reply(None, f"the model returned an empty reply (finish_reason={reason})", _ms(t0))
    return Reply(text, None, _ms(t0))


def model_unreachable(settings: ModelSettings, token: Optional[str], timeout_s: float = 8.0) -> Optional[str]:
    """Why no model can play with these settings (endpoint down, token refused, model unknown); None when
    the endpoint lists its models (or cannot list them but answers), which costs no generation."""
    from openai import APIConnectionError, APIStatusError, APITimeoutError, AuthenticationError, OpenAI

    if not token and urlparse(settings.base_url).hostname == urlparse(ROUTER_URL).hostname:
        return "the Hugging Face router needs a token, and neither you nor the Space gave one"
    try:
        OpenAI(base_url=settings.base_url, api_key=token or "no-token", timeout=timeout_s,
               max_retries=0).models.list()
    except AuthenticationError:
        return f"{settings.base_url} refused the token (HTTP 401)"
    except (APIConnectionError, APITimeoutError):
        return f"cannot reach {settings.base_url}"
    except APIStatusError:
        return None  # it answers; some servers do not list models
    except Exception:  # a malformed answer: it still answers
        pass
    return None


@dataclass(frozen=True)
class PlayerFailure:
    """The player produced nothing to submit (unreachable, HTTP error, a reply without code): shown as
    the player's error; it is no step and uses no turn."""
    error: str
    latency_ms: float = 0.0
    raw_reply: Optional[str] = None


Turn = Union[StepRecord, PlayerFailure]


def ask_model(handle: EpisodeHandle, settings: ModelSettings, token: Optional[str],
              wait: Callable[[Callable[[], Reply]], Optional[Reply]] = lambda call: call(),
              ) -> tuple[Optional[Reply], list[dict[str, str]]]:
    """The model's reply to the episode's next prompt; ``wait`` runs the call (and may abandon it:
    None means the caller stopped waiting, so nothing is played)."""
    messages = handle.model_messages()
    record = handle.record
    if record.player != "model" or record.model != settings.model:
        record.player = "model" if not record.steps or record.player == "model" else "mixed"
        record.model, record.temperature = settings.model, settings.temperature
    return wait(lambda: complete(settings, token, messages)), messages


def play_reply(handle: EpisodeHandle, reply: Reply, messages: list[dict[str, str]]) -> Turn:
    """Submit the code of ``reply``, or record the player's failure (no step, no turn)."""
    code, error = submission_of(reply.text, reply.error)
    if code is None:
        handle.player_failed(error)
        return PlayerFailure(error, reply.latency_ms, reply.text)
    return handle.submit(code, latency_ms=reply.latency_ms, prompt_messages=messages, raw_reply=reply.text)


def model_turn(handle: EpisodeHandle, settings: ModelSettings, token: Optional[str]) -> Turn:
    """Ask the model for the next submission and play it."""
    reply, messages = ask_model(handle, settings, token)
    return play_reply(handle, reply, messages)


def human_turn(handle: EpisodeHandle, code: str, finish: bool = False) -> StepRecord:
    record = handle.record
    if record is not None and record.player == "model" and record.steps:
        record.player = "mixed"
    elif record is not None and not record.steps:
        record.player, record.model, record.temperature = "human", None, None
    return handle.submit(code, finish=finish)


def _msg(e: Exception) -> str:
    text = getattr(e, "message", None) or str(e)
    return " ".join(str(text).split())[:300]


def _ms(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000.0, 1)
