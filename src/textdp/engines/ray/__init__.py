"""Every Ray engine, in one package (issue 33).

* :mod:`~textdp.engines.ray.data` — Ray Data: a dataset's column released on an actor pool
  (word, vector and document releases; the front is :mod:`textdp.integrations.ray`).
* :mod:`~textdp.engines.ray.text_files` — ``textdp privatize --engine ray``: files in, files
  out on a pool of file workers.
* :mod:`~textdp.engines.ray.vector_files` — ``textdp embed`` / ``docembed --engine ray``.
* :mod:`~textdp.engines.ray.pool` — what the file workers' pools share: bounded restarts, files
  handed out, staging, the job's runtime.
* :mod:`~textdp.engines.ray.runtime` (Ray itself, thread limits, no generator shipped),
  :mod:`~textdp.engines.ray.cluster` (the command line's runtime, started or joined) and
  :mod:`~textdp.engines.ray.logs` (Ray's lines kept off the command's streams).

What runs in each worker process is one protocol for every engine
(:mod:`textdp.engines.worker`); the seeded vector chunk streams are laid out once
(:func:`textdp.mechanisms.embedding.release.release_rows`). Nothing here is imported before a
run uses Ray.
"""
