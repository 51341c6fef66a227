"""The emulator the reconstructed fixtures of this folder were recorded from (``"reconstructed":
true`` in each): llama-cpp-python 0.3.36's server (chat format chatml-function-calling) as its
source has it, for a machine that cannot build it. Requests are validated with the server's
own TypedDicts (``llama_cpp/llama_types.py`` from the sdist) and errors answered as its
RouteErrorHandler does (500, ``str(exc)``); replies and chunks are shaped as
``llama_chat_format.py`` shapes them (``_convert_completion_to_chat``,
``_convert_completion_to_chat_function``: the tool's name and id in every chunk). The model's
words are scripted (no weights run). Not run by the tests; needs fastapi and uvicorn::

    python reconstruct.py PORT PATH/TO/llama_cpp/llama_types.py
    python tests/agent/_llamacpp.py record --upstream http://127.0.0.1:PORT --reconstructed
"""

import importlib.util
import json
import sys
import uuid

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, Field

spec = importlib.util.spec_from_file_location("llama_types", sys.argv[2])
lt = importlib.util.module_from_spec(spec)
sys.modules["llama_types"] = lt
spec.loader.exec_module(lt)

MODEL = "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
ANSWER = ["notes", ".txt", " says", ":", " The", " release", " ships", " on", " Friday", "."]
ARGS = ['{"', "path", '":', ' "', "notes", ".txt", '"}']
N = [0]


class Req(BaseModel):
    messages: list[lt.ChatCompletionRequestMessage] = Field(default=[])
    tools: list[lt.ChatCompletionTool] | None = None
    tool_choice: lt.ChatCompletionToolChoiceOption | None = None
    stream: bool = False
    model: str | None = None


class R(APIRoute):
    def get_route_handler(self):
        orig = super().get_route_handler()

        async def h(request: Request):
            try:
                return await orig(request)
            except Exception as exc:
                print(f"Exception: {exc!s}", file=sys.stderr)
                return JSONResponse(
                    {
                        "error": {
                            "message": str(exc),
                            "type": "internal_server_error",
                            "param": None,
                            "code": None,
                        }
                    },
                    status_code=500,
                )

        return h


app = FastAPI()
app.router.route_class = R


def cmpl_id():
    N[0] += 1
    return f"cmpl-{uuid.UUID(int=N[0])}"


def sse(chunks):
    def gen():
        for c in chunks:
            yield f"data: {json.dumps(c)}\r\n\r\n"
        yield "data: [DONE]\r\n\r\n"

    return StreamingResponse(gen(), media_type="text/event-stream")


@app.post("/v1/chat/completions")
def chat(body: Req):
    created = 1764280000 + N[0]
    cid = cmpl_id()
    choice = body.tool_choice
    if body.tools and choice not in (None, "none"):
        if isinstance(choice, dict):
            name = choice["function"]["name"]
            return function_call(name, cid, created, body.stream)
        # The handler's own check: "required" fails it, and the server answers a bare 500.
        assert choice == "auto"
        if body.messages and body.messages[-1]["role"] != "tool":
            return function_call(body.tools[0]["function"]["name"], cid, created, body.stream)
    return message(cid, created, body.stream)


def message(cid, created, stream):
    if not stream:
        return {
            "id": "chat" + cid,
            "object": "chat.completion",
            "created": created,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "".join(ANSWER)},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 212,
                "completion_tokens": len(ANSWER),
                "total_tokens": 212 + len(ANSWER),
            },
        }
    chunks = [
        {
            "id": "chat" + cid,
            "model": MODEL,
            "created": created,
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant"},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
        }
    ]
    chunks += [
        {
            "id": "chat" + cid,
            "model": MODEL,
            "created": created,
            "object": "chat.completion.chunk",
            "choices": [
                {"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}
            ],
        }
        for piece in ANSWER
    ]
    chunks.append(
        {
            "id": "chat" + cid,
            "model": MODEL,
            "created": created,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
        }
    )
    return sse(chunks)


def function_call(name, cid, created, stream):
    tool_id = "call_" + "_0_" + name + "_" + cid
    if not stream:
        args = "".join(ARGS)
        return {
            "id": "chat" + cid,
            "object": "chat.completion",
            "created": created,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "function_call": {"name": name, "arguments": args},
                        "tool_calls": [
                            {
                                "id": tool_id,
                                "type": "function",
                                "function": {"name": name, "arguments": args},
                            }
                        ],
                    },
                    "logprobs": None,
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {
                "prompt_tokens": 187,
                "completion_tokens": len(ARGS),
                "total_tokens": 187 + len(ARGS),
            },
        }
    head = {
        "id": "chat" + cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL,
    }
    chunks = [
        head
        | {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": None,
                    "logprobs": None,
                    "delta": {
                        "role": "assistant",
                        "content": None,
                        "function_call": None,
                        "tool_calls": None,
                    },
                }
            ]
        }
    ]
    for piece in ARGS:
        chunks.append(
            head
            | {
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": None,
                        "logprobs": None,
                        "delta": {
                            "role": None,
                            "content": None,
                            "function_call": {"name": name, "arguments": piece},
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": tool_id,
                                    "type": "function",
                                    "function": {"name": name, "arguments": piece},
                                }
                            ],
                        },
                    }
                ]
            }
        )
    chunks.append(
        head
        | {
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "logprobs": None,
                    "delta": {
                        "role": None,
                        "content": None,
                        "function_call": None,
                        "tool_calls": None,
                    },
                }
            ]
        }
    )
    return sse(chunks)


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
