-- test_worker_files.sh: a job that leaves FILES screenshots.
loadtest "many"
