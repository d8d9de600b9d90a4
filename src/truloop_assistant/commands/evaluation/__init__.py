"""``truloop-assistant eval``: how well a model picks the member agent's tools, per group of requests.

Each case is one request to the real member agent (:mod:`.harness` runs the cases and scores them).
The run's tool calls are read from its messages. Server tools run against the keyless defaults in a
throwaway Redis (the sample directory, two events, one memory, the bundled handbook, no places
provider); a run ends at its first device call or confirmation question, so nothing reaches a phone
and nothing that needs the user's yes is done.
"""
