"""helm test: the model is listed and a chat completion returns content."""
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wait_until_served import wait_until_served  # noqa: E402

base_url = os.environ["FRONTEND_URL"].rstrip("/")
model = os.environ["MODEL"]
wait_until_served(base_url, model, float(os.environ.get("READY_TIMEOUT_SECONDS", "600")),
                  float(os.environ.get("READY_POLL_SECONDS", "10")))

request = {
    "model": model,
    "messages": [{"role": "user", "content": os.environ.get("PROMPT", "Say hello.")}],
    "max_tokens": int(os.environ.get("MAX_TOKENS", "512")),
    "stream": False,
}
post = urllib.request.Request(
    f"{base_url}/v1/chat/completions",
    data=json.dumps(request).encode(),
    headers={"Content-Type": "application/json"},
)
with urllib.request.urlopen(post, timeout=300) as response:
    reply = json.load(response)
message = reply["choices"][0]["message"]
content = (message.get("content") or "").strip()
if not content:
    sys.exit(f"FAIL: chat completion returned no content (finish_reason="
             f"{reply['choices'][0].get('finish_reason')}, reasoning={bool(message.get('reasoning_content'))}); "
             "a reasoning-only reply means max_tokens ran out: raise smokeTest.maxTokens")
print(f"PASS: {model} answered: {content[:200]!r}", flush=True)
