"""Text rules: the one place every layer takes them from.

* :mod:`ragit.text.scripts` — Unicode ranges of Hangul, kana and Han, the CJK
  character and run patterns, word patterns, :func:`~ragit.text.scripts.cjk_runs`
  and a question's script composition;
* :mod:`ragit.text.normalize` — case and compatibility folding;
* :mod:`ragit.text.english` — English stop words and the plural ``-s`` rule;
* :mod:`ragit.text.korean` — Korean particles, stop words and content words;
* :mod:`ragit.text.tokens` — the token estimate of budgets and caps, and the word count;
* :mod:`ragit.text.ngram` — the words of the offline n-gram embedding;
* :mod:`ragit.text.question` — a question analysed once (:func:`~ragit.text.question.analyze`),
  all that retrieval reads of its text;
* :mod:`ragit.text.dates` — instants as people read them (text output, the narrative).

This package sits below every other package except ``ragit.contract``: it imports
nothing from ragit but the standard library. Import the modules directly; this
``__init__`` re-exports nothing.
"""
