# Each line marked "error" is a mistake mypy --strict must catch with the package's annotations.
import functionalbpe as fb

tok = fb.Tokenizer.load("tokenizer.json")
name: str = tok.encode("hello")  # error: a list of ids is not a str
tok.decode("not ids")  # error: decode takes ids
tok.encode("hello", dropout="high")  # error: dropout is a float
fb.train(["text"], vocab_size="300")  # error: vocab_size is an int
