"""From memory to a turn: hybrid search, the memory block, retrieval of exact messages, fencing,
conversation compaction."""
