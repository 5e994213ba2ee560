"""TextPrivatizer → TfidfVectorizer → LogisticRegression on VADER's movie-review sentences.

Trains a sentiment classifier (positive: mean human rating > 0) once on the original sentences and
once on privatised ones, and prints both test accuracies. In the private Pipeline every call
privatises the texts it is given: ``fit`` releases the training sentences (ε per word), ``score``
releases the test sentences (ε again, on those). Run:

    python examples/sklearn_pipeline.py [--train 3000] [--test 1000] [--epsilon 8] [--seed 7]
"""

from __future__ import annotations

import argparse

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from textdp.datasets import load_vader
from textdp.sklearn import TextPrivatizer


def main(train: int = 3000, test: int = 1000, epsilon: float = 8.0, seed: int | None = None) -> dict:
    sentences = load_vader("movie_reviews")  # 10,605 sentences, offline after the first call
    if train + test > len(sentences):
        raise SystemExit(f"--train + --test must be at most {len(sentences)}")
    # A fixed, evenly spread split (the file lists positive sentences first, then negative ones):
    # test sentences at evenly spaced rows, training sentences evenly spaced among the others.
    test_rows = {round(i * len(sentences) / test) for i in range(test)}
    others = [s for i, s in enumerate(sentences) if i not in test_rows]
    rest = [others[round(i * len(others) / train)] for i in range(train)]
    held = [sentences[i] for i in sorted(test_rows)]
    x_train, y_train = [s.text for s in rest], [s.score > 0 for s in rest]
    x_test, y_test = [s.text for s in held], [s.score > 0 for s in held]

    def classifier() -> list:
        return [("tfidf", TfidfVectorizer(sublinear_tf=True, min_df=2)),
                ("clf", LogisticRegression(max_iter=1000))]

    plain = Pipeline(classifier()).fit(x_train, y_train)
    private = Pipeline([("privatize", TextPrivatizer("mvc", epsilon=epsilon, seed=seed)),
                        *classifier()]).fit(x_train, y_train)
    result = {"train": len(x_train), "test": len(x_test), "epsilon": epsilon,
              "accuracy_non_private": plain.score(x_test, y_test),
              "accuracy_private": private.score(x_test, y_test),
              "unchanged": private.named_steps["privatize"].report_["deniability"]
              ["expected_unchanged_fraction"]}
    print(f"{result['train']} training and {result['test']} test sentences (VADER movie reviews)")
    print(f"non-private accuracy:        {result['accuracy_non_private']:.3f}")
    print(f"private accuracy (MVC, ε={epsilon:g}): {result['accuracy_private']:.3f} "
          f"(expected unchanged words in the test release: {result['unchanged']:.0%})")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=3000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--epsilon", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    main(args.train, args.test, args.epsilon, args.seed)
