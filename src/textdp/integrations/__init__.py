"""Thin layers that run textdp where the data live (issue 13).

Each module here calls the one Python API (:func:`textdp.privatize`, :class:`textdp.Privatizer`,
the embedding and document releases) and the one report builder; none holds mechanism logic.
Each imports its engine (Ray, Hugging Face ``datasets``) only when used, and says which extra to
install when it is missing.
"""
