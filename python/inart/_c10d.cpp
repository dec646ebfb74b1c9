// _c10d.cpp: the C++ half of the "inart" torch.distributed backend.
//
// ProcessGroupInart is a c10d::ProcessGroup whose collectives are queued, in
// issue order, to one thread per process group; that thread runs each one by
// calling the Python executor (inart/backend.py, Executor.run) with the GIL,
// which sums float tensors through InArt and does everything else over a
// gloo process group it owns.  Why C++ at all: DDP's reducer and the
// optimizers call the process group from C++ threads and hold on to the Work
// objects it returns; Work objects made in Python are destroyed when they
// cross back into C++ (DDP then hangs) and torch 1.13's
// _create_work_from_future drops errors in wait().  Here every Work is a C++
// object (InartWork) owning a c10 Future, completed exactly once with either
// the output tensors or the Python exception's text as a RuntimeError, so
// DDP's backward and work.wait() raise it.
//
// Invariants: the queue thread never holds the GIL while completing a Work
// (future callbacks may take it); the op functions (called from any thread,
// with or without the GIL) only copy C++ values into the queue, so issuing
// never waits for Python.  shutdown() (also the destructor) fails the
// queued ops, joins the thread and drops the executor.
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/extension.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace py = pybind11;
using c10d::OpType;
using ms = std::chrono::milliseconds;

namespace
{

class InartWork : public c10d::Work
{
      public:
	InartWork(int rank, OpType type, std::string name, std::vector<at::Tensor> outputs)
	    : Work(rank, type), name_(std::move(name)), outputs_(std::move(outputs)),
	      future_(c10::make_intrusive<c10::ivalue::Future>(
		  c10::ListType::create(c10::TensorType::get())))
	{
	}

	bool isCompleted() override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return completed_;
	}

	bool isSuccess() const override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return completed_ && !exception_;
	}

	std::exception_ptr exception() const override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return exception_;
	}

	int sourceRank() const override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return source_;
	}

	std::vector<at::Tensor> result() override
	{
		return outputs_;
	}

	// The op itself is bounded by the process group's timeout (the executor
	// passes it to InArt and gloo); `timeout` bounds the wait further.
	bool wait(ms timeout) override
	{
		std::unique_lock<std::mutex> lock(mutex_);
		if (timeout == kNoTimeout) {
			cv_.wait(lock, [&] { return completed_; });
		} else if (!cv_.wait_for(lock, timeout, [&] { return completed_; })) {
			throw std::runtime_error("inart: " + name_ + " did not complete within " +
						 std::to_string(timeout.count()) +
						 " ms (work.wait timeout)");
		}
		std::exception_ptr e = exception_;
		lock.unlock();
		// complete() sets completed_ before it completes the future: wait for
		// that too, so the future is done when wait() returns (the future is
		// marked before its callbacks run, so a callback may call wait()).
		future_->wait();
		if (e)
			std::rethrow_exception(e);
		return true;
	}

	c10::intrusive_ptr<c10::ivalue::Future> getFuture() override
	{
		return future_;
	}

	void complete(const std::string &error, int source)
	{
		std::exception_ptr e;
		if (!error.empty())
			e = std::make_exception_ptr(std::runtime_error(error));
		{
			std::lock_guard<std::mutex> lock(mutex_);
			if (completed_)
				return;
			completed_ = true;
			exception_ = e;
			source_ = source;
		}
		cv_.notify_all();
		if (e)
			future_->setError(e);
		else
			future_->markCompleted(c10::IValue(outputs_));
	}

	const std::string &name() const
	{
		return name_;
	}

      private:
	std::string name_;
	std::vector<at::Tensor> outputs_;
	c10::intrusive_ptr<c10::ivalue::Future> future_;
	int source_ = -1;
};

// Called with the GIL held; returns what Executor.run returned.
using Call = std::function<py::object(py::object &)>;

// Run without the GIL on the gloo group; returns the gloo Work.
using Native = std::function<c10::intrusive_ptr<c10d::Work>(c10d::ProcessGroup &)>;

struct Item {
	c10::intrusive_ptr<InartWork> work;
	Call call;
	Native native;	   // set: the op goes to gloo from C++, not through Python
	int64_t bytes = 0; // counted for native ops (Python counts its own)
	int64_t timeout_ms = 0;
};

// Calls and bytes of the ops run natively on gloo, per op, over every
// process group (inart.backend.stats() adds them to Python's counts).
std::mutex stats_mu;
std::map<std::string, std::pair<int64_t, int64_t>> native_stats;

// A tensor gloo takes as it is: dense, on the CPU, contiguous, not
// bfloat16 (gloo 1.13 refuses it).  Anything else goes through Python,
// which stages it.
bool plain(const at::Tensor &t)
{
	return t.layout() == c10::kStrided && t.device().is_cpu() && t.is_contiguous() &&
	       t.scalar_type() != at::kBFloat16;
}

bool plain(const std::vector<at::Tensor> &v)
{
	for (const auto &t : v)
		if (!plain(t))
			return false;
	return true;
}

int64_t nbytes(const std::vector<at::Tensor> &v)
{
	int64_t n = 0;
	for (const auto &t : v)
		n += t.numel() * t.element_size();
	return n;
}

std::vector<at::Tensor> flat(const std::vector<std::vector<at::Tensor>> &v)
{
	std::vector<at::Tensor> out;
	for (const auto &l : v)
		out.insert(out.end(), l.begin(), l.end());
	return out;
}

class ProcessGroupInart : public c10d::ProcessGroup
{
      public:
	// executor: inart.backend.Executor; sw: its gloo process group, used
	// from C++ for the ops that need no staging; ina: whether float SUM/AVG
	// all-reduces go through InArt (else they are plain gloo ops too).
	ProcessGroupInart(int rank, int size, py::object executor, double timeout_s,
			  c10::intrusive_ptr<c10d::ProcessGroup> sw, bool ina)
	    : ProcessGroup(rank, size), executor_(std::move(executor)),
	      timeout_ms_(static_cast<int64_t>(timeout_s * 1000.0)), sw_(std::move(sw)), ina_(ina)
	{
		thread_ = std::thread([this] { loop(); });
	}

	~ProcessGroupInart() override
	{
		shutdown();
	}

	const std::string getBackendName() const override
	{
		return "inart";
	}

	// Fail what is queued, end the thread, drop the executor.  Idempotent.
	void shutdown()
	{
		std::deque<Item> left;
		{
			std::lock_guard<std::mutex> lock(mu_);
			if (stopped_)
				return;
			stopping_ = true;
			left.swap(queue_);
		}
		cv_.notify_all();
		for (auto &it : left)
			it.work->complete("inart: " + it.work->name() +
					      " not run: the process group was shut down",
					  -1);
		if (thread_.joinable()) {
			if (Py_IsInitialized() && PyGILState_Check()) {
				py::gil_scoped_release
				    nogil; // the thread may be waiting for the GIL
				thread_.join();
			} else {
				thread_.join();
			}
		}
		std::lock_guard<std::mutex> lock(mu_);
		stopped_ = true;
		if (Py_IsInitialized()) {
			py::gil_scoped_acquire gil;
			try {
				executor_.attr("close")(); // closes the InArt context now
			} catch (py::error_already_set &) {
			}
			executor_ = py::object();
		} else {
			executor_.release(); // the interpreter is gone: leak rather than crash
		}
	}

	int64_t queued()
	{
		std::lock_guard<std::mutex> lock(mu_);
		return static_cast<int64_t>(queue_.size()) + (busy_ ? 1 : 0);
	}

	c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &t,
						 const c10d::AllreduceOptions &o) override
	{
		int op = static_cast<int>(o.reduceOp.op_);
		int64_t tm = tmo(o.timeout);
		Native nat;
		bool floats = false;
		for (const auto &x : t)
			floats = floats || x.is_floating_point();
		bool sum = op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::AVG;
		if (!(ina_ && floats && sum) && plain(t) && op != c10d::ReduceOp::AVG &&
		    op != c10d::ReduceOp::PREMUL_SUM) {
			c10d::AllreduceOptions oo = o;
			nat = [t, oo](c10d::ProcessGroup &g) mutable { return g.allreduce(t, oo); };
		}
		return push(
		    OpType::ALLREDUCE, "allreduce", t,
		    [t, op, tm](py::object &ex) { return ex.attr("run")("allreduce", t, op, tm); },
		    nat, nbytes(t), tm);
	}

	c10::intrusive_ptr<c10d::Work>
	allreduce_coalesced(std::vector<at::Tensor> &t,
			    const c10d::AllreduceCoalescedOptions &o) override
	{
		int op = static_cast<int>(o.reduceOp.op_);
		int64_t tm = tmo(o.timeout);
		return push(OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", t,
			    [t, op, tm](py::object &ex) {
				    return ex.attr("run")("allreduce_coalesced", t, op, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &t,
						 const c10d::BroadcastOptions &o) override
	{
		int64_t root = o.rootRank, rt = o.rootTensor, tm = tmo(o.timeout);
		Native nat;
		if (plain(t)) {
			c10d::BroadcastOptions oo = o;
			nat = [t, oo](c10d::ProcessGroup &g) mutable { return g.broadcast(t, oo); };
		}
		return push(
		    OpType::BROADCAST, "broadcast", t,
		    [t, root, rt, tm](py::object &ex) {
			    return ex.attr("run")("broadcast", t, root, rt, tm);
		    },
		    nat, nbytes(t), tm);
	}

	c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &t,
					      const c10d::ReduceOptions &o) override
	{
		int op = static_cast<int>(o.reduceOp.op_);
		int64_t root = o.rootRank, rt = o.rootTensor, tm = tmo(o.timeout);
		return push(OpType::REDUCE, "reduce", t, [t, op, root, rt, tm](py::object &ex) {
			return ex.attr("run")("reduce", t, op, root, rt, tm);
		});
	}

	c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &out,
						 std::vector<at::Tensor> &in,
						 const c10d::AllgatherOptions &o) override
	{
		int64_t tm = tmo(o.timeout);
		Native nat;
		if (plain(in) && plain(flat(out))) {
			c10d::AllgatherOptions oo = o;
			nat = [out, in, oo](c10d::ProcessGroup &g) mutable {
				return g.allgather(out, in, oo);
			};
		}
		return push(
		    OpType::ALLGATHER, "allgather", flat(out),
		    [out, in, tm](py::object &ex) {
			    return ex.attr("run")("allgather", out, in, tm);
		    },
		    nat, nbytes(in), tm);
	}

	c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &out, at::Tensor &in,
						       const c10d::AllgatherOptions &o) override
	{
		int64_t tm = tmo(o.timeout);
		return push(OpType::_ALLGATHER_BASE, "_allgather_base", {out},
			    [out, in, tm](py::object &ex) {
				    return ex.attr("run")("_allgather_base", out, in, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work>
	allgather_coalesced(std::vector<std::vector<at::Tensor>> &out, std::vector<at::Tensor> &in,
			    const c10d::AllgatherOptions &o) override
	{
		int64_t tm = tmo(o.timeout);
		return push(OpType::ALLGATHER_COALESCED, "allgather_coalesced", flat(out),
			    [out, in, tm](py::object &ex) {
				    return ex.attr("run")("allgather_coalesced", out, in, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &out,
					      std::vector<at::Tensor> &in,
					      const c10d::GatherOptions &o) override
	{
		int64_t root = o.rootRank, tm = tmo(o.timeout);
		return push(OpType::GATHER, "gather", flat(out),
			    [out, in, root, tm](py::object &ex) {
				    return ex.attr("run")("gather", out, in, root, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &out,
					       std::vector<std::vector<at::Tensor>> &in,
					       const c10d::ScatterOptions &o) override
	{
		int64_t root = o.rootRank, tm = tmo(o.timeout);
		return push(OpType::SCATTER, "scatter", out, [out, in, root, tm](py::object &ex) {
			return ex.attr("run")("scatter", out, in, root, tm);
		});
	}

	c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &out,
						      std::vector<std::vector<at::Tensor>> &in,
						      const c10d::ReduceScatterOptions &o) override
	{
		int op = static_cast<int>(o.reduceOp.op_);
		int64_t tm = tmo(o.timeout);
		return push(OpType::REDUCE_SCATTER, "reduce_scatter", out,
			    [out, in, op, tm](py::object &ex) {
				    return ex.attr("run")("reduce_scatter", out, in, op, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work>
	_reduce_scatter_base(at::Tensor &out, at::Tensor &in,
			     const c10d::ReduceScatterOptions &o) override
	{
		int op = static_cast<int>(o.reduceOp.op_);
		int64_t tm = tmo(o.timeout);
		return push(OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", {out},
			    [out, in, op, tm](py::object &ex) {
				    return ex.attr("run")("_reduce_scatter_base", out, in, op, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &out, at::Tensor &in,
						     std::vector<int64_t> &out_splits,
						     std::vector<int64_t> &in_splits,
						     const c10d::AllToAllOptions &o) override
	{
		int64_t tm = tmo(o.timeout);
		std::vector<int64_t> os = out_splits, is = in_splits;
		return push(OpType::ALLTOALL_BASE, "alltoall_base", {out},
			    [out, in, os, is, tm](py::object &ex) {
				    return ex.attr("run")("alltoall_base", out, in, os, is, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &out,
						std::vector<at::Tensor> &in,
						const c10d::AllToAllOptions &o) override
	{
		int64_t tm = tmo(o.timeout);
		return push(OpType::ALLTOALL, "alltoall", out, [out, in, tm](py::object &ex) {
			return ex.attr("run")("alltoall", out, in, tm);
		});
	}

	c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &t, int dst, int tag) override
	{
		int64_t tm = timeout_ms_;
		return push(OpType::SEND, "send", t, [t, dst, tag, tm](py::object &ex) {
			return ex.attr("run")("send", t, dst, tag, tm);
		});
	}

	c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &t, int src, int tag) override
	{
		int64_t tm = timeout_ms_;
		return push(OpType::RECV, "recv", t, [t, src, tag, tm](py::object &ex) {
			return ex.attr("run")("recv", t, src, tag, tm);
		});
	}

	c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor> &t, int tag) override
	{
		int64_t tm = timeout_ms_;
		return push(OpType::RECVANYSOURCE, "recv_anysource", t,
			    [t, tag, tm](py::object &ex) {
				    return ex.attr("run")("recv_anysource", t, tag, tm);
			    });
	}

	c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &o) override
	{
		int64_t tm = tmo(o.timeout);
		c10d::BarrierOptions oo = o;
		Native nat = [oo](c10d::ProcessGroup &g) mutable { return g.barrier(oo); };
		return push(
		    OpType::BARRIER, "barrier", {},
		    [tm](py::object &ex) { return ex.attr("run")("barrier", tm); }, nat, 0, tm);
	}

      private:
	int64_t tmo(ms t) const
	{
		return t.count() > 0 ? t.count() : timeout_ms_;
	}

	c10::intrusive_ptr<c10d::Work> push(OpType type, const char *name,
					    std::vector<at::Tensor> outputs, Call call,
					    Native native = Native(), int64_t bytes = 0,
					    int64_t timeout_ms = 0)
	{
		auto work = c10::make_intrusive<InartWork>(rank_, type, name, std::move(outputs));
		{
			std::lock_guard<std::mutex> lock(mu_);
			if (stopping_)
				TORCH_CHECK(false, "inart: ", name,
					    " on a process group that was shut down "
					    "(destroy_process_group) ");
			queue_.push_back(
			    Item{work, std::move(call), std::move(native), bytes, timeout_ms});
		}
		cv_.notify_one();
		return work;
	}

	void loop()
	{
		for (;;) {
			Item it;
			{
				std::unique_lock<std::mutex> lock(mu_);
				cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
				if (queue_.empty())
					return;
				it = std::move(queue_.front());
				queue_.pop_front();
				busy_ = true;
			}
			std::string error;
			int source = -1;
			if (it.native && sw_) {
				error = run_native(it);
			} else if (!Py_IsInitialized()) {
				error = "inart: " + it.work->name() +
					" not run: the Python interpreter is gone";
			} else {
				py::gil_scoped_acquire gil;
				try {
					py::object r = it.call(executor_);
					if (!r.is_none())
						source = r.cast<int>();
				} catch (py::error_already_set &e) {
					// "InartTimeoutError: job 'j0' rank 1 ..." (what() would
					// add the traceback)
					try {
						error = py::str(e.type().attr("__name__"))
							    .cast<std::string>() +
							": " +
							py::str(e.value()).cast<std::string>();
					} catch (...) {
						error = e.what();
					}
				} catch (const std::exception &e) {
					error = e.what();
				}
				if (!error.empty() && error.find("inart") == std::string::npos)
					error = "inart " + it.work->name() + ": " + error;
			}
			it.work->complete(error, source); // without the GIL: callbacks may take it
			{
				std::lock_guard<std::mutex> lock(mu_);
				busy_ = false;
			}
		}
	}

	// The op on the gloo group from this thread, without the GIL; the
	// error text, empty on success.
	std::string run_native(Item &it)
	{
		std::string error;
		try {
			auto w = it.native(*sw_);
			w->wait(ms(it.timeout_ms > 0 ? it.timeout_ms : timeout_ms_));
			std::lock_guard<std::mutex> lock(stats_mu);
			auto &st = native_stats[it.work->name()];
			st.first += 1;
			st.second += it.bytes;
		} catch (const std::exception &e) {
			error = "inart " + it.work->name() + " (gloo path): " + e.what();
		}
		return error;
	}

	py::object executor_;
	int64_t timeout_ms_;
	c10::intrusive_ptr<c10d::ProcessGroup> sw_;
	bool ina_;
	std::mutex mu_;
	std::condition_variable cv_;
	std::deque<Item> queue_;
	bool stopping_ = false, stopped_ = false, busy_ = false;
	std::thread thread_;
};

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
	m.def(
	    "native_stats",
	    [](bool reset) {
		    std::lock_guard<std::mutex> lock(stats_mu);
		    py::dict d;
		    for (const auto &kv : native_stats)
			    d[py::str(kv.first)] =
				py::make_tuple(kv.second.first, kv.second.second);
		    if (reset)
			    native_stats.clear();
		    return d;
	    },
	    py::arg("reset") = false,
	    "{op: (calls, bytes)} of the ops run on gloo from C++, over every group");
	m.doc() = "the C++ half of inart's torch.distributed backend (inart/backend.py)";
	py::class_<ProcessGroupInart, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupInart>>(
	    m, "ProcessGroupInart")
	    .def(py::init<int, int, py::object, double, c10::intrusive_ptr<c10d::ProcessGroup>,
			  bool>(),
		 py::arg("rank"), py::arg("size"), py::arg("executor"), py::arg("timeout_s"),
		 py::arg("sw"), py::arg("ina"))
	    .def("shutdown", &ProcessGroupInart::shutdown)
	    .def("queued", &ProcessGroupInart::queued);
}
