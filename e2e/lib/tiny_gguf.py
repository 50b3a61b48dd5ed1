"""Writes a tiny llama-architecture GGUF model whose greedy output is scripted.

The local-model tests cannot download a model, so they make one with
llama.cpp's own writer (PyPI `gguf`, installed by `cargo xtask test` into
target/gguf-venv). The model is a real llama for llama.cpp: a SentencePiece
vocabulary (control tokens, 256 byte tokens, printable ASCII, and the
script's words), 2 blocks, 64-dimensional embeddings, 4 heads, feed-forward
128, context 1024, F16 matrices. Its weights make it a lookup table: the
attention and feed-forward outputs are zero, so each position's state is its
token's embedding, a one-hot vector, and the output matrix maps it to one
next token with a logit of 80 against 0 for every other token. Sampling at
any sensible temperature then follows the script exactly. The prompt's last
token (the newline after `<|im_start|>assistant`) starts it.

Scripts:
  answer  "Hello from a tiny local model." then end of turn
  loop    "Counting: tick tock tick tock ..." until the token limit. Its
          context is 16384, so that a test can let it run for many
          thousand tokens: a reply of the default 512 is over before a
          test under load has pressed Stop.
  broken  "Broken reply" then a lone byte 0xFF (not UTF-8), then end of turn
  tool    a Hermes/Qwen <tool_call> that writes note.txt, then end of turn.
          Its call is one token of its own (a lookup table cannot repeat a
          character), and its context is 4096: the tools' description alone
          is over 1,000 tokens of this character-level vocabulary. Every
          reply of this model is the same call, so a test bounds the turn
          with the profile's step budget (2: the first call runs, the
          second is not admitted).

Usage: python3 tiny_gguf.py SCRIPT OUT.gguf
"""

import sys

import numpy as np
import gguf

N_EMBD = 64
N_FF = 128
N_HEAD = 4
N_BLOCKS = 2
N_CTX = 1024
LOGIT = 10.0  # times the normalised one-hot's 8: a logit of 80

CONTROL = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<|endoftext|>"]
# Words the scripts emit as single tokens ("▁" is SentencePiece's space).
WORDS = ["Hello", "\u2581from", "\u2581a", "\u2581tiny", "\u2581local", "\u2581model",
         "Counting", "\u2581tick", "\u2581tock", "Broken", "\u2581reply"]

# The tool call as the model emits it, in one token.
TOOL_CALL = ('<tool_call>\n{"name":\u2581"write_file",\u2581"arguments":\u2581{"path":\u2581"note.txt",'
             '\u2581"content":\u2581"written\u2581by\u2581a\u2581tiny\u2581model"}}\n</tool_call>')
# Tokens only some scripts' vocabularies have, and their contexts, so the
# other models' header facts stay as the tests expect.
EXTRA_WORDS = {"tool": [TOOL_CALL]}
CONTEXT = {"tool": 4096, "loop": 16384}

SCRIPTS = {
    "answer": ["<0x0A>", "Hello", "\u2581from", "\u2581a", "\u2581tiny", "\u2581local",
               "\u2581model", ".", "<|im_end|>"],
    "loop": ["<0x0A>", "Counting", ":", "\u2581tick", "\u2581tock", "\u2581tick"],
    "broken": ["<0x0A>", "Broken", "\u2581reply", "<0xFF>", "<|im_end|>"],
    "tool": ["<0x0A>", TOOL_CALL, "<|im_end|>"],
}


def vocabulary(script_name):
    tokens, types = [], []
    for t in CONTROL:
        tokens.append(t)
        types.append(gguf.TokenType.UNKNOWN if t == "<unk>" else gguf.TokenType.CONTROL)
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(gguf.TokenType.BYTE)
    for c in range(0x20, 0x7F):
        tokens.append("\u2581" if c == 0x20 else chr(c))
        types.append(gguf.TokenType.NORMAL)
    for w in WORDS + EXTRA_WORDS.get(script_name, []):
        tokens.append(w)
        types.append(gguf.TokenType.NORMAL)
    return tokens, types


def main(script_name, out):
    script = SCRIPTS[script_name]
    tokens, types = vocabulary(script_name)
    index = {t: i for i, t in enumerate(tokens)}
    n_vocab = len(tokens)

    embd = np.zeros((n_vocab, N_EMBD), dtype=np.float16)
    output = np.zeros((n_vocab, N_EMBD), dtype=np.float16)
    # One dimension per token that has a successor; a token appears at most
    # once as a source, so the map is a function.
    sources = {}
    for here, following in zip(script, script[1:]):
        if here in sources:
            raise SystemExit(f"{here!r} has two successors in {script_name}")
        sources[here] = following
    if len(sources) > N_EMBD:
        raise SystemExit("a script may have at most 64 steps")
    for dim, (here, following) in enumerate(sources.items()):
        embd[index[here], dim] = 1.0
        output[index[following], dim] = LOGIT

    w = gguf.GGUFWriter(out, "llama")
    w.add_name(f"Lifeline tiny {script_name}")
    w.add_context_length(CONTEXT.get(script_name, N_CTX))
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_BLOCKS)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * n_vocab)
    w.add_token_types(types)
    w.add_unk_token_id(index["<unk>"])
    w.add_bos_token_id(index["<s>"])
    w.add_eos_token_id(index["<|im_end|>"])
    w.add_eot_token_id(index["<|im_end|>"])
    w.add_add_bos_token(False)
    w.add_add_space_prefix(False)

    ones = np.ones(N_EMBD, dtype=np.float32)
    w.add_tensor("token_embd.weight", embd)
    w.add_tensor("output_norm.weight", ones)
    w.add_tensor("output.weight", output)
    square = np.zeros((N_EMBD, N_EMBD), dtype=np.float16)
    for b in range(N_BLOCKS):
        p = f"blk.{b}."
        w.add_tensor(p + "attn_norm.weight", ones)
        for name in ["attn_q", "attn_k", "attn_v", "attn_output"]:
            w.add_tensor(p + name + ".weight", square)
        w.add_tensor(p + "ffn_norm.weight", ones)
        w.add_tensor(p + "ffn_gate.weight", np.zeros((N_FF, N_EMBD), dtype=np.float16))
        w.add_tensor(p + "ffn_up.weight", np.zeros((N_FF, N_EMBD), dtype=np.float16))
        w.add_tensor(p + "ffn_down.weight", np.zeros((N_EMBD, N_FF), dtype=np.float16))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in SCRIPTS:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
