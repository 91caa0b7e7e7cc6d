"""The run journal (spec 17): writing the hash-chained frames and verifying the chain, reading a
journal back (the fold), finding runs, comparing two, retention, the task hashes a resume matches by, and the
run receipt."""
