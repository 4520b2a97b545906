"""A small tokenizer folder that stands in for openai/gpt-oss-120b on a machine that can download none.

dynamo.mocker reads it from --model-path, dynamo.frontend from the model card (chat template,
detokenizing) and AIPerf from --tokenizer (synthetic prompts, token counts). Needs only `tokenizers`.

The mocker answers with random token ids around 1000-2000, so the vocabulary is padded with plain
added tokens " w<id>" up to VOCAB_SIZE: every id it emits then decodes to visible text (with a smaller
vocabulary the replies come back with empty content and the smoke test fails).
"""
from __future__ import annotations

import json
from pathlib import Path

VOCAB_SIZE = 4096
SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", "<pad>", "<|user|>", "<|assistant|>", "<|system|>"]
WORDS = ("the quick brown fox jumps over a lazy dog hello world model token cache prefill decode "
         "worker router frontend request response latency throughput mocker dynamo").split()
# Plain-text roles; content may be a string or a list of {"type": "text", "text": ...} parts.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{{ c['text'] if c['text'] is defined else '' }}{% endfor %}{% endif %}"
    "\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _corpus(lines: int = 400, words_per_line: int = 40) -> list[str]:
    return [" ".join(WORDS[(line * 7 + word) % len(WORDS)] for word in range(words_per_line))
            for line in range(lines)]


def build_tokenizer(out_dir: str | Path, vocab_size: int = VOCAB_SIZE) -> Path:
    """Write tokenizer.json, tokenizer_config.json, config.json and generation_config.json to out_dir."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1024, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(_corpus(), trainer)
    tokenizer.add_tokens([AddedToken(f" w{token_id}", normalized=False, special=False)
                          for token_id in range(tokenizer.get_vocab_size(), vocab_size)])
    tokenizer.save(str(out / "tokenizer.json"))

    bos, eos = tokenizer.token_to_id("<s>"), tokenizer.token_to_id("</s>")
    files = {
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
            "unk_token": "<unk>", "pad_token": "<pad>", "model_max_length": 8192, "chat_template": CHAT_TEMPLATE,
        },
        # A tiny llama-shaped config: enough for the model card; nothing loads weights.
        "config.json": {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": tokenizer.get_vocab_size(),
            "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 4, "head_dim": 16, "max_position_embeddings": 8192,
            "torch_dtype": "bfloat16", "bos_token_id": bos, "eos_token_id": eos,
        },
        "generation_config.json": {"bos_token_id": bos, "eos_token_id": eos},
    }
    for name, content in files.items():
        (out / name).write_text(json.dumps(content, indent=1) + "\n")
    return out


if __name__ == "__main__":
    import sys

    print(build_tokenizer(sys.argv[1]))
