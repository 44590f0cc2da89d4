#!/usr/bin/env python3
"""The reference answer for the remote-generator tests: the same chat request sent to the peer
server with the official `openai` SDK, not streamed. Prints the answer's content as JSON.
  peer_reference.py BASE_URL API_KEY REQUEST.json   (model, messages, temperature, top_p, max_tokens)
"""
import json
import sys

from openai import OpenAI

base_url, api_key, request_path = sys.argv[1:4]
with open(request_path) as f:
    request = json.load(f)
client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=120)
answer = client.chat.completions.create(**request)
print(json.dumps({"content": answer.choices[0].message.content,
                  "finish_reason": answer.choices[0].finish_reason,
                  "prompt_tokens": answer.usage.prompt_tokens if answer.usage else None,
                  "completion_tokens": answer.usage.completion_tokens if answer.usage else None}))
