# A user script of the public API: mypy --strict must pass it (tests/contract/test_typing.py).
from typing import Dict, List, Tuple

import functionalbpe as fb

tok: fb.Tokenizer = fb.train(["hello world"] * 10, vocab_size=270, special_tokens=["<|endoftext|>"], progress=False)
ids: List[int] = tok.encode("hello <|endoftext|>", allowed_special="all")
text: str = tok.decode(ids)
batch: List[List[int]] = tok.encode_batch(["a", "b"], num_threads=2)
back: List[str] = tok.decode_batch(batch)
spans: Tuple[List[int], List[Tuple[int, int]]] = tok.encode_with_offsets("hello")
vocab: Dict[str, int] = tok.get_vocab()
n: int = tok.n_vocab + len(tok) + tok.eot_token + tok.encode_single_token("hello")
data: bytes = tok.decode_single_token_bytes(ids[0])
maybe = tok.token_to_id("hello")
dropped: List[int] = tok.encode("hello", dropout=0.1, seed=3)
