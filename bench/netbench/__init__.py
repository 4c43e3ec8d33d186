"""netbench: the code of bench/run, one job per module.

common   repository path, loopback address, output helpers, usage error
cli      command-line arguments
system   processes, cgroup/proc CPU accounting, pinning, ports, machine load, servers
tools    per tool: build/install/versions, server and client commands, output parsers
rows     the row table (standard, --ext and --fast-paths rows)
runner   the measuring session: runs, retries, the order of runs, results
report   statistics, text table, Markdown, writing JSON and Markdown
profile  --profile (perf stat, strace -c)

Standard library only.
"""
