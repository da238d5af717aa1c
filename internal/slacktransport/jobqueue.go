// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slacktransport

import (
	"sync"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

// JobQueue is the bot's worker pool with a bounded, fair queue in front of
// it. At most workers jobs run at once; up to capacity more wait. Waiting
// jobs are taken round-robin across requesters (a person's ten commands do
// not delay everyone else's one), after the urgent ones (clicks: a
// decision should not wait behind diagnoses). A worker is a goroutine that
// exists only while there is work: an idle bot holds none.
//
// Admission is two-step so that the caller can ack before the job runs:
// Admit reserves a place (or refuses when the queue is full), then Run or
// RunUrgent hands over the job for that place.
type JobQueue struct {
	mu       sync.Mutex
	workers  int
	capacity int
	spawn    func(func()) // starts a worker goroutine (the bot's WaitGroup.Go)

	running  int // workers alive
	reserved int // admitted, job not handed over yet
	waiting  int // jobs in urgent and byKey
	urgent   []func()
	byKey    map[string][]func()
	turns    []string // requesters with waiting jobs, next first

	avgRun time.Duration // moving average of a job's run time
}

// defaultJobTime is the run-time estimate before any job has finished.
const defaultJobTime = 2 * time.Second

// NewJobQueue returns a queue running at most workers jobs at once, with
// up to capacity more waiting; spawn starts a worker goroutine.
func NewJobQueue(workers, capacity int, spawn func(func())) *JobQueue {
	return &JobQueue{workers: workers, capacity: max(capacity, 0), spawn: spawn, byKey: map[string][]func(){}, avgRun: defaultJobTime}
}

// Admit reserves a place for one job. It refuses when every worker is busy
// and capacity jobs already wait, and then says how long until a place is
// likely free (the jobs ahead spread over the workers, at the average run
// time), for the refusal's "try again in".
func (q *JobQueue) Admit() (retryAfter time.Duration, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running+q.reserved+q.waiting < q.workers+q.capacity {
		q.reserved++
		return 0, true
	}
	rounds := (q.waiting+q.reserved)/q.workers + 1
	return time.Duration(rounds) * q.avgRun, false
}

// Run hands over the job of an admitted place; key is the requester, for
// the round-robin order.
func (q *JobQueue) Run(key string, job func()) { q.handOver(key, job, false) }

// RunUrgent hands over the job of an admitted place ahead of the
// requesters' turns.
func (q *JobQueue) RunUrgent(job func()) { q.handOver("", job, true) }

func (q *JobQueue) handOver(key string, job func(), urgent bool) {
	q.mu.Lock()
	q.reserved--
	if q.running < q.workers {
		q.running++
		q.mu.Unlock()
		q.spawn(func() { q.work(job) })
		return
	}
	q.enqueueLocked(key, job, urgent)
	q.mu.Unlock()
}

// RunOwed queues a job that is owed to a request already admitted (the
// answer to a command that joined another's diagnosis): it is never
// refused, and it needs no reservation.
func (q *JobQueue) RunOwed(key string, job func()) {
	q.mu.Lock()
	q.reserved++
	q.mu.Unlock()
	q.Run(key, job)
}

func (q *JobQueue) enqueueLocked(key string, job func(), urgent bool) {
	q.waiting++
	metrics.QueueWaiting.Set(float64(q.waiting))
	if urgent {
		q.urgent = append(q.urgent, job)
		return
	}
	if len(q.byKey[key]) == 0 {
		q.turns = append(q.turns, key)
	}
	q.byKey[key] = append(q.byKey[key], job)
}

// nextLocked takes the next waiting job: urgent first, then the first job
// of the requester whose turn it is, who then goes to the back of the line.
func (q *JobQueue) nextLocked() (func(), bool) {
	if len(q.urgent) > 0 {
		job := q.urgent[0]
		q.urgent[0] = nil
		q.urgent = q.urgent[1:]
		q.waiting--
		metrics.QueueWaiting.Set(float64(q.waiting))
		return job, true
	}
	if len(q.turns) == 0 {
		return nil, false
	}
	key := q.turns[0]
	q.turns = q.turns[1:]
	jobs := q.byKey[key]
	job := jobs[0]
	jobs[0] = nil
	if len(jobs) == 1 {
		delete(q.byKey, key)
	} else {
		q.byKey[key] = jobs[1:]
		q.turns = append(q.turns, key)
	}
	q.waiting--
	metrics.QueueWaiting.Set(float64(q.waiting))
	return job, true
}

// work runs job, then waiting jobs until there are none.
func (q *JobQueue) work(job func()) {
	for {
		start := time.Now()
		job()
		took := time.Since(start)
		q.mu.Lock()
		q.avgRun = (7*q.avgRun + took) / 8
		next, ok := q.nextLocked()
		if !ok {
			q.running--
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		job = next
	}
}

// Depth returns the jobs running and waiting (for tests and logs).
func (q *JobQueue) Depth() (running, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running, q.waiting
}
