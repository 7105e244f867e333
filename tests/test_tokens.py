"Chapter 02: the engine's tokenizer against the from-scratch encoder and transformers, streaming, chat template."
import json, os, random, shutil
import pytest
from qwen_engine.config import asset_path
from qwen_engine.tokens import test_strings as make_strings   # aliased: pytest would collect test_*
from qwen_engine.tokens import (tokenizer, Tokenizer, StreamDecoder, ScratchBPE, ChatTemplate, Conversation,
                                mismatches, in_context, all_code_points, with_pattern, format_tool_call, byte_to_unicode,
                                NEW_IN_UNICODE_17, NFC_UNKNOWN_IN_UNICODE_9, QWEN2_REGEX, QWEN35_REGEX, TEXT_VOCAB_SIZE, VOCAB_SIZE, STOP_IDS)

FULL = os.environ.get("QE_TOKENS_FULL") == "1"   # the full 2.2M-string code point sweep (about two minutes)

@pytest.fixture(scope="module")
def tok(): return tokenizer()

@pytest.fixture(scope="module")
def bpe(): return ScratchBPE.from_files()

@pytest.fixture(scope="module")
def T(): return make_strings()

@pytest.fixture(scope="module")
def chat(): return ChatTemplate()

# ---- the engine's tokenizer -------------------------------------------------------------------------------

def test_byte_alphabet_is_a_bijection():
    t = byte_to_unicode()
    assert sorted(t) == list(range(256)) and len(set(t.values())) == 256
    assert t[ord(" ")] == "\u0120" and t[ord("A")] == "A"

@pytest.mark.parametrize("i", [TEXT_VOCAB_SIZE, 248200, VOCAB_SIZE - 1], ids=lambda i: f"id{i}")
def test_padding_ids_have_no_text(tok, i):
    with pytest.raises(ValueError, match=f"token id {i} is a padding row"): tok.decode([5, i])
    with pytest.raises(ValueError, match="padding row"): StreamDecoder(tok).push(i)

@pytest.mark.parametrize("i", [-1, VOCAB_SIZE, 10**9], ids=lambda i: f"id{i}")
def test_out_of_range_ids_refused(tok, i):
    with pytest.raises(ValueError, match="outside the vocabulary"): tok.decode([i])

def test_last_text_ids_decode(tok):
    "Negative control of the padding check: 248,076 is the last id with text (declared only in tokenizer_config.json)."
    assert tok.decode([TEXT_VOCAB_SIZE - 1]) == "<|audio_pad|>"
    assert tok.encode("a<|audio_pad|>b<tts_pad>") == [64, 248076, 65, 248072]

def test_special_tokens_inside_user_text(tok, chat):
    "Added-token strings typed by a user become control ids (reference behaviour); special=False keeps them text."
    user = "please print <|im_end|> and <think> literally"
    ids = tok.encode(chat.render([{"role": "user", "content": user}]))
    assert ids.count(tok.id_of("<|im_end|>")) == 2 and tok.id_of("<think>") in ids
    plain = tok.encode(user, special=False)
    assert not set(plain) & set(tok.added.values()) and tok.decode(plain) == user

@pytest.mark.parametrize("data,offset", [(b"\xff", 0), (b"ab\xc3", 2), (b"x\xed\xa0\x80", 1), (b"\xc0\xaf", 0),
                                         (b"ok \x80 ok", 3)], ids=["ff", "truncated", "surrogate", "overlong", "continuation"])
def test_invalid_utf8_input_is_an_error(tok, data, offset):
    "Invalid UTF-8 on the way in is a ValueError naming the first bad byte (never replaced)."
    with pytest.raises(ValueError, match=f"not valid UTF-8: byte 0x{data[offset]:02x} at offset {offset}"):
        tok.encode_bytes(data)

def test_valid_bytes_and_lone_surrogates(tok):
    assert tok.encode_bytes("naïve 😀".encode()) == tok.encode("naïve 😀")
    with pytest.raises(ValueError, match="lone surrogate U\\+D800 at index 1"): tok.encode("a\ud800")
    with pytest.raises(ValueError, match="lone surrogate"): tok.encode_batch(["ok", "\udfff"])
    with pytest.raises(TypeError, match="encode_bytes"): tok.encode(b"bytes")

def test_decode_invalid_bytes_matches_reference(tok):
    "Id sequences whose bytes are not UTF-8 decode with U+FFFD exactly as the `tokenizers` decoder does."
    r = random.Random(0)
    single = [tok._bytes.index(bytes([b])) for b in range(256)]
    for _ in range(300):
        ids = [r.choice(single) if r.random() < .6 else r.randrange(TEXT_VOCAB_SIZE) for _ in range(r.randint(1, 12))]
        assert tok.decode(ids) == tok._hf.decode(ids, skip_special_tokens=False), ids

def test_empty(tok, chat):
    assert tok.encode("") == [] and tok.decode([]) == "" and tok.encode_bytes(b"") == []
    assert chat.render([{"role": "user", "content": ""}]) == "<|im_start|>user\n<|im_end|>\n"

def test_200k_character_message(tok, bpe, chat):
    r = random.Random(1)
    msg = "".join(r.choice(make_strings(200, seed=9)) for _ in range(4000))[:200_000]
    assert len(msg) == 200_000
    ids = tok.encode(chat.render([{"role": "user", "content": msg}], add_generation_prompt=True))
    assert tok.decode(ids).startswith("<|im_start|>user\n") and len(ids) > 20_000
    body = tok.encode(msg)
    assert body == bpe.encode(msg)
    sd = StreamDecoder(tok)
    assert "".join(sd.push(i) for i in body) + sd.flush() == tok.decode(body)
    assert tok.encode("a" * 200_000) == bpe.encode("a" * 2000) * 100   # one long chunk: 2,000 'a' merge into whole tokens

# ---- streaming --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("s", ["🫠 melting", "ภาษาไทยไม่มีช่องว่าง", "👨‍👩‍👧‍👦🇯🇵", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "नमस्ते", "日本語テキスト"],
                         ids=["emoji", "thai", "zwj", "math", "hindi", "cjk"])
def test_stream_emits_only_complete_characters(tok, s):
    ids = tok.encode(s)
    sd, pieces, held = StreamDecoder(tok), [], 0
    for i in ids:
        pieces.append(sd.push(i)); held += bool(sd.pending)
        assert "\ufffd" not in pieces[-1]
    assert "".join(pieces) + sd.flush() == s
    # byte by byte: nothing appears before a character's last byte
    single = {b: tok._bytes.index(bytes([b])) for b in set(s.encode())}
    sd, out = StreamDecoder(tok), []
    for b in s.encode(): out.append(sd.push(single[b]))
    assert "".join(out) == s and sum(map(len, out)) == len(s)
    assert all(len(p) <= 1 for p in out)

def test_stream_split_character_is_held(tok):
    "A token that ends inside a character: the stream holds its bytes (control: per-token decoding breaks)."
    s = "🫠"
    ids = tok.encode(s)
    assert len(ids) > 1                              # the vocabulary splits this emoji inside its bytes
    sd = StreamDecoder(tok)
    assert sd.push(ids[0]) == "" and sd.pending == tok.token_bytes(ids[0])
    assert "\ufffd" in tok.decode(ids[:1])          # what a naive per-token decoder would print
    assert sd.push(ids[1:]) == s and sd.pending == b""

def test_stream_unfinished_character_at_end(tok):
    sd = StreamDecoder(tok)
    assert sd.push(tok._bytes.index(b"\xe0")) == "" and sd.flush() == "\ufffd"

def test_stream_equals_decode_on_random_ids(tok):
    r = random.Random(2)
    for _ in range(200):
        ids = [r.randrange(TEXT_VOCAB_SIZE) for _ in range(r.randint(1, 30))]
        sd = StreamDecoder(tok)
        assert "".join(sd.push(i) for i in ids) + sd.flush() == tok.decode(ids)

# ---- from-scratch BPE == tokenizers -------------------------------------------------------------------------

def test_test_set_is_deterministic_and_large(T):
    assert len(T) >= 17_000 and make_strings() == T and make_strings(seed=6) != T
    assert any("<|im_start|>" in s[1:] for s in T) and any("\n" * 20 in s or "\r\n" * 10 in s for s in T)

def test_scratch_equals_engine_on_test_set(tok, bpe, T):
    "All 17,700 strings: same ids, and decoding gives back the normalised bytes, with both decoders."
    assert mismatches(tok, bpe, T) == []

def test_scratch_detects_a_wrong_merge_order(tok, T):
    "Negative control: swapping the ranks of two early merges changes some encodings."
    tj = json.loads(asset_path("tokenizer/tokenizer.json").read_text())
    merges = tj["model"]["merges"]
    merges[3], merges[40] = merges[40], merges[3]
    cfg = json.loads(asset_path("tokenizer/tokenizer_config.json").read_text())
    from qwen_engine.tokens import _added_tokens, pin_unicode
    wrong = ScratchBPE(tj["model"]["vocab"], merges, _added_tokens(tj, cfg), pin_unicode(QWEN35_REGEX))
    assert len(mismatches(tok, wrong, T[:3000])) > 0

SWEEP_STEP = {"alone": 1 if FULL else 13, "in_context": 1 if FULL else 52}

@pytest.mark.parametrize("where", ["alone", "in_context"])
def test_code_point_sweep(tok, bpe, where):
    "Every code point with QE_TOKENS_FULL=1 (2,224,128 strings); by default every 13th alone and every 52nd in context."
    cps = all_code_points()[::SWEEP_STEP[where]]
    texts = [chr(c) for c in cps] if where == "alone" else [in_context(c) for c in cps]
    assert mismatches(tok, bpe, texts) == []

def test_unicode17_code_points_need_the_pin(tok, bpe):
    "Every Unicode 17.0 addition in context: pinned encoder agrees, unpinned one (regex's 17.0 tables) does not."
    new = [c for a, b in NEW_IN_UNICODE_17 for c in range(a, b + 1)][::7]
    texts = [in_context(c) for c in new]
    assert mismatches(tok, bpe, texts) == []
    assert len(mismatches(tok, ScratchBPE.from_files(pin=False), texts)) > 100

def test_unicode_tables_rederived():
    "NEW_IN_UNICODE_17 = unassigned in 16.0 but assigned for `regex`; NFC_UNKNOWN_IN_UNICODE_9 = after 9.0 and active in NFC."
    up = pytest.importorskip("unicodedataplus")   # Unicode 16.0 with `age` (a dev tool, not needed by the engine)
    import regex, unicodedata
    assert up.unidata_version == "16.0.0"
    cn17 = regex.compile(r"\p{Cn}")
    derived = [c for c in all_code_points() if up.category(chr(c)) == "Cn" and not cn17.match(chr(c))]
    assert derived == [c for a, b in NEW_IN_UNICODE_17 for c in range(a, b + 1)]
    def after9(c):
        a = up.age(chr(c))
        return a == "Unassigned" or tuple(map(int, a.split(".")[:2])) > (9, 0)
    parts = {int(x, 16) for c in all_code_points() for x in unicodedata.decomposition(chr(c)).split()
             if unicodedata.decomposition(chr(c)) and not unicodedata.decomposition(chr(c)).startswith("<")}
    active = [c for c in all_code_points() if after9(c) and (unicodedata.combining(chr(c)) or c in parts
              or (unicodedata.decomposition(chr(c)) and not unicodedata.decomposition(chr(c)).startswith("<")))]
    assert active == [c for a, b in NFC_UNKNOWN_IN_UNICODE_9 for c in range(a, b + 1)]

def test_nfc_is_unicode_9(tok, bpe):
    "The reference's NFC has Unicode 9.0 tables: later compositions stay apart (control: Python's own NFC joins them)."
    import unicodedata
    for d in ["\U00011935\U00011930", "\U00011382\U000113c9"]:
        assert tok.decode(tok.encode(d)) == d
    assert unicodedata.normalize("NFC", "\U00011935\U00011930") == "\U00011938"    # control: 14.0 composes
    assert mismatches(tok, bpe, ["x\U00011935\U00011930y", "\U00016d63\U00016d67\U00016d67"]) == []

def test_nfc_reordering_of_every_combining_mark(tok, bpe):
    "Every code point with a combining class (Python's tables) beside marks of lower and higher class, both orders."
    import unicodedata
    marks = [c for c in all_code_points() if unicodedata.combining(chr(c))]
    texts = [f"a{chr(c)}{m}" for c in marks for m in "\u0316\u0301\u05b0\u0345"]
    texts += [f"e{m}{chr(c)}x" for c in marks for m in "\u0316\u0301\u05b0\u0345"]
    assert len(marks) > 900 and mismatches(tok, bpe, texts) == []

# ---- the regex question, and transformers as a peer --------------------------------------------------------

@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("qwen3_5_tok")
    for f in ["tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt", "chat_template.jinja"]:
        shutil.copy(asset_path("tokenizer/" + f), d / f)
    (d / "config.json").write_text(json.dumps({"model_type": "qwen3_5"}))
    return d

@pytest.fixture(scope="module")
def qwen35(hf_dir):
    transformers = pytest.importorskip("transformers")
    t = transformers.AutoTokenizer.from_pretrained(str(hf_dir))
    assert type(t).__name__ == "Qwen3_5Tokenizer"
    return t

def test_engine_equals_qwen3_5_tokenizer(tok, qwen35, T):
    "The tokenizer the model is validated against agrees with the engine on every test string."
    assert qwen35(T, add_special_tokens=False)["input_ids"] == tok.encode_batch(T)

@pytest.fixture(scope="module")
def qwen2_differ(tok, T):
    "Indices of the test strings that the Qwen2 regex (no \\p{M}) encodes differently."
    q2 = with_pattern(tok, QWEN2_REGEX)
    return [i for i, (a, b) in enumerate(zip(tok.encode_batch(T), q2.encode_batch(T, add_special_tokens=False))) if a != b.ids]

def test_qwen2_regex_differs(tok, qwen2_differ):
    "The regex without \\p{M} encodes part of the test set differently (the count is in the chapter)."
    assert len(qwen2_differ) == 5518
    assert with_pattern(tok, QWEN35_REGEX).encode("नमस्ते").ids == tok.encode("नमस्ते")   # control: same regex, same ids

def test_transformers_qwen2_tokenizer_differs_on_the_same_strings(tok, T, qwen2_differ, tmp_path):
    "Without config.json transformers picks Qwen2Tokenizer, whose regex drops \\p{M}: it differs exactly where ours does."
    transformers = pytest.importorskip("transformers")
    for f in ["tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"]:
        shutil.copy(asset_path("tokenizer/" + f), tmp_path / f)
    q2 = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert type(q2).__name__ == "Qwen2Tokenizer"
    ids = q2(T, add_special_tokens=False)["input_ids"]
    assert [i for i, (a, b) in enumerate(zip(tok.encode_batch(T), ids)) if a != b] == qwen2_differ

# ---- chat template ----------------------------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {"name": "search", "description": "Find <text> & 'quotes' — ünïcode",
          "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "exact": {"type": "boolean"}}}}}]

def _call(name, args, fn_wrapper=True):
    return {"type": "function", "function": {"name": name, "arguments": args}} if fn_wrapper else {"name": name, "arguments": args}

CONVERSATIONS = {
    "plain": [{"role": "user", "content": "hi"}],
    "system": [{"role": "system", "content": "  be brief  "}, {"role": "user", "content": "hi"}],
    "tools_system": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "find x"}],
    "tool_loop": [{"role": "system", "content": "s"}, {"role": "user", "content": "find x"},
                  {"role": "assistant", "reasoning_content": "search it", "content": "",
                   "tool_calls": [_call("search", {"q": "x", "exact": True}), _call("search", {"q": None, "n": 3.5}, False)]},
                  {"role": "tool", "content": "found"}, {"role": "tool", "content": "also"}],
    "history": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "<think>\nold\n</think>\n\nA"},
                {"role": "user", "content": "b"}, {"role": "assistant", "content": "<think>\nnew\n</think>\n\nB"}],
    "content_and_call": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": "Let me look.", "tool_calls": [_call("search", {"q": ["a", 1]})]}],
    "list_content": [{"role": "user", "content": [{"type": "text", "text": "part one "}, {"type": "text", "text": "two"}]}],
}

@pytest.mark.parametrize("name", list(CONVERSATIONS))
@pytest.mark.parametrize("thinking", [True, False], ids=["think", "nothink"])
def test_template_matches_transformers(chat, qwen35, name, thinking):
    msgs = CONVERSATIONS[name]
    tools = TOOLS if "tool" in name else None
    for gen in (True, False):
        ours = chat.render(msgs, tools, add_generation_prompt=gen, enable_thinking=thinking)
        ref = qwen35.apply_chat_template(msgs, tools=tools, add_generation_prompt=gen, enable_thinking=thinking, tokenize=False)
        assert ours == ref

def test_template_parts(chat):
    text = chat.render(CONVERSATIONS["tool_loop"], TOOLS, add_generation_prompt=True)
    assert '"description": "Find <text> & \'quotes\' — ünïcode"' in text          # JSON as json.dumps writes it
    assert "<think>\nsearch it\n</think>\n\n<tool_call>" in text
    assert "<parameter=exact>\nTrue\n</parameter>" in text and "<parameter=q>\nNone\n</parameter>" in text
    assert "<|im_start|>user\n<tool_response>\nfound\n</tool_response>\n<tool_response>\nalso\n</tool_response><|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n<think>\n")
    assert chat.render(CONVERSATIONS["plain"], add_generation_prompt=True, enable_thinking=False).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    hist = chat.render(CONVERSATIONS["history"])
    assert "old" not in hist and "<think>\nnew\n</think>" in hist                 # reasoning before the last query is dropped

@pytest.mark.parametrize("value,text", [(True, "True"), (False, "False"), (None, "None"), (3, "3"), (2.5, "2.5"),
                                        ("a b", "a b"), ("two\nlines", "two\nlines"), ([1, "é"], '[1, "é"]'),
                                        ({"k": True}, '{"k": true}'), ("", "")],
                         ids=["true", "false", "none", "int", "float", "str", "multiline", "list", "dict", "empty"])
def test_tool_call_rendering_matches_template(chat, value, text):
    call = format_tool_call("f", {"v": value})
    assert f"<parameter=v>\n{text}\n</parameter>" in call
    rendered = chat.render([{"role": "user", "content": "q"},
                            {"role": "assistant", "content": "", "tool_calls": [_call("f", {"v": value})]}])
    assert rendered.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n" + call + "<|im_end|>\n")

HOSTILE = {  # name: (template, what the sandbox does: an exception type, or None for "renders nothing")
    "mro": ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "SecurityError"),
    "cycler": ("{{ cycler.__init__.__globals__.os.popen('id').read() }}", "SecurityError"),
    "mutate": ("{{ messages.append({'role': 'system'}) }}", "SecurityError"),
    "include": ("{% include '/etc/passwd' %}", "TypeError"),          # no loader: nothing is read from disk
    "import": ("{% import 'os' as os %}{{ os }}", "TypeError"),
    "range": ("{% for i in range(10**9) %}{% endfor %}", "OverflowError"),
    "globals": ("{{ raise_exception.__globals__ }}", None),          # underscore attributes are undefined
    "format": ("{{ '{0.__class__}'.format(messages) }}", None),
}

@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_template_is_refused(name):
    src, expected = HOSTILE[name]
    if expected is None:
        assert ChatTemplate(src).render([{"role": "user", "content": "x"}]) == ""
    else:
        with pytest.raises(Exception) as e: ChatTemplate(src).render([{"role": "user", "content": "x"}])
        assert type(e.value).__name__ == expected, repr(e.value)

def test_hostile_control():
    "Control: the same kind of expression on allowed data renders, so the refusals above are the sandbox's."
    assert ChatTemplate("{{ messages[0].content.upper() }}{{ range(3)|list }}").render([{"role": "user", "content": "x"}]) == "X[0, 1, 2]"

def test_unknown_role_and_empty_conversation(chat):
    with pytest.raises(ValueError, match="message 1 has role 'robot'"):
        chat.render([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}])
    with pytest.raises(ValueError, match="role None"): chat.render([{"content": "no role"}])
    with pytest.raises(ValueError, match="at least one message"): chat.render([])

# ---- append-only, ids as the truth ------------------------------------------------------------------------

def _turn(reasoning, calls, content=""):
    text = reasoning + "\n</think>\n\n" + (content + "\n\n" if content else "") + "\n".join(
        format_tool_call(n, a) for n, a in calls) + "<|im_end|>"
    return text, {"role": "assistant", "reasoning_content": reasoning, "content": content,
                  "tool_calls": [_call(n, a) for n, a in calls]}

STEPS = [("Search first.", [("search", {"q": "x", "exact": False})], ""),
         ("Two calls at once.", [("search", {"q": "y"}), ("search", {"q": "z", "exact": True})], ""),
         ("With words before.", [("search", {"q": "ελληνικά"})], "Looking again."),
         ("Structured.", [("search", {"q": {"nested": [1, 2]}})], ""),
         ("Last one.", [("search", {"q": "done"})], "")]

@pytest.mark.parametrize("thinking", [True, False], ids=["think", "nothink"])
def test_append_only_at_every_step_boundary(tok, chat, thinking):
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "find things"}]
    conv = Conversation(tok, chat, msgs, tools=TOOLS, enable_thinking=thinking)
    for k, (why, calls, content) in enumerate(STEPS):
        prev = tok.decode(conv.ids)
        text, msg = _turn(why if thinking else "", calls, content)
        if not thinking: text = text[len("\n</think>\n\n"):]      # the prompt already holds the empty think block
        conv.add_generated(tok.encode(text), msg)
        new = conv.add_messages(*[{"role": "tool", "content": f"r{k}.{j}"} for j in range(len(calls))])
        full = chat.render(conv.messages, TOOLS, add_generation_prompt=True, enable_thinking=thinking)
        assert full == prev + text + tok.decode(new)
        assert conv.ids == tok.encode(full), f"step {k}"

@pytest.mark.parametrize("reasoning", ["\nleading newline", "trailing newline\n", "  spaces  "], ids=["lead", "trail", "spaces"])
def test_append_only_fails_on_untrimmed_reasoning(tok, chat, reasoning):
    conv = Conversation(tok, chat, [{"role": "user", "content": "q"}], tools=TOOLS)
    text, msg = _turn(reasoning, [("search", {"q": "x"})])
    conv.add_generated(tok.encode(text), msg)
    with pytest.raises(ValueError, match="does not extend the recorded ids"): conv.add_messages({"role": "tool", "content": "r"})

def test_append_only_fails_at_a_new_user_turn(tok, chat):
    "A new user query drops the reasoning of earlier turns from the history: not append-only (a new prefill)."
    conv = Conversation(tok, chat, [{"role": "user", "content": "q"}], tools=TOOLS)
    text, msg = _turn("think", [("search", {"q": "x"})])
    conv.add_generated(tok.encode(text), msg)
    conv.add_messages({"role": "tool", "content": "r"})
    conv.add_generated(tok.encode("ok\n</think>\n\nDone.<|im_end|>"), {"role": "assistant", "content": "<think>\nok\n</think>\n\nDone."})
    with pytest.raises(ValueError, match="does not extend"): conv.add_messages({"role": "user", "content": "next"})

def test_generated_ids_are_kept_not_retokenised(tok, chat):
    "`=` then `start` (as a grammar would force them): the conversation keeps those ids, not the canonical one."
    forced, canonical = tok.encode("=") + tok.encode("start"), tok.encode("=start")
    assert tok.decode_bytes(forced) == tok.decode_bytes(canonical) and forced != canonical and len(canonical) == 1
    conv = Conversation(tok, chat, [{"role": "user", "content": "q"}], enable_thinking=False)
    n = len(conv.ids)
    gen = forced + tok.encode("<|im_end|>")
    conv.add_generated(gen, {"role": "assistant", "content": "=start"})
    conv.add_messages({"role": "tool", "content": "r"})
    assert conv.ids[n:n + len(gen)] == gen
    assert conv.ids != tok.encode(tok.decode(conv.ids))        # re-tokenising the text would change the ids

def test_generated_turn_checks(tok, chat):
    conv = Conversation(tok, chat, [{"role": "user", "content": "q"}])
    with pytest.raises(ValueError, match="must end with"): conv.add_generated(tok.encode("no stop"), {"role": "assistant", "content": ""})
    with pytest.raises(ValueError, match="padding row"): conv.add_generated([248100, STOP_IDS[1]], {"role": "assistant", "content": ""})

# ---- command line -----------------------------------------------------------------------------------------

def test_cli(capsys):
    from qwen_engine.cli import main
    assert main(["tokens", "encode", "=start"]) == 0 and capsys.readouterr().out.strip() == "53754"
    assert main(["tokens", "decode", "53754", "248046"]) == 0 and capsys.readouterr().out.strip() == "=start<|im_end|>"
    assert main(["tokens", "decode", "248100"]) == 2 and "padding row" in capsys.readouterr().err
    assert main(["tokens", "decode", "x"]) == 2
