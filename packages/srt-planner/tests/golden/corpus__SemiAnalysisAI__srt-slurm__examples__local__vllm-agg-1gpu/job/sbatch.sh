#!/bin/bash
#SBATCH --job-name=qwen3-0.6b-vllm-local-agg
#SBATCH --output=/out/%j/logs/sweep_%j.log
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=1
#SBATCH --segment=1
#SBATCH --account=acct
#SBATCH --time=01:00:00
#SBATCH --partition=batch

set -e
JOB_ID="${SLURM_JOB_ID:-${SRTCTL_JOB_ID}}"
OUTPUT_DIR=/out/"${JOB_ID}"
LOG_DIR="${OUTPUT_DIR}/logs"
mkdir -p "${LOG_DIR}"
export SRTCTL_OUTPUT_DIR="${OUTPUT_DIR}"
exec 2>&1
echo "srt job ${JOB_ID} on ${SLURM_JOB_NUM_NODES:-?} node(s): ${SLURM_JOB_NODELIST:-?}"
set +e
srt-runtime run --plan plan.json &
SRT_PID="$!"
# scancel and the time limit signal every process of the job, the supervisor included:
# it cleans up, and this script (so the job) stays alive until the supervisor is done.
trap ':' TERM INT
wait "${SRT_PID}"
EXIT_CODE=$?
while kill -0 "${SRT_PID}" 2>/dev/null; do wait "${SRT_PID}"; EXIT_CODE=$?; done
echo "srt job ${JOB_ID} finished with exit code ${EXIT_CODE}"
exit "${EXIT_CODE}"
