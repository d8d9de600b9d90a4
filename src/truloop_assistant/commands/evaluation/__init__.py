"""``truloop-assistant eval``: how well a model picks the member agent's tools, per group of requests.

Each case is one request to the real member agent (:mod:`.harness` runs the cases, :mod:`.scoring`
judges them), played through its whole turn (:mod:`.turns`): when the run pauses for the user's
phone, :mod:`.phone` answers as the phone would (a sample calendar, every dialog confirmed, every
permission granted) and the run resumes, so every call of every step is scored. Server tools run
against the keyless defaults in a throwaway Redis, each case on its own freshly seeded database
(:mod:`.running`); :mod:`.export` writes the results as JSON. A case may send a picture or a voice
note with its request (:mod:`.case_files`), read as the server reads a person's files
(:mod:`.played_files`).
"""
