package io.kairos.control;

import com.fasterxml.jackson.core.type.TypeReference;
import io.kairos.protocol.JobView;
import io.kairos.protocol.SubmitResult;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Submissions a controller acknowledged (201), by id, with what was sent; and the checks that every
 * one of them is still there, unchanged, in a job listing.
 */
final class Acks {
  /** What the client sent for one job. */
  record Sent(String name, List<String> command, int gpus) {
    Map<String, Object> body() {
      var m = new LinkedHashMap<String, Object>();
      m.put("name", name);
      m.put("command", command);
      if (gpus > 0) {
        m.put("gpus", gpus);
      }
      return m;
    }
  }

  final Map<Long, Sent> byId = new ConcurrentHashMap<>();
  final List<String> duplicates = Collections.synchronizedList(new ArrayList<>());

  /** A random job: name unique per {@code tag}, a sleep command, 0 (CPU only) to 8 GPUs. */
  static Sent randomJob(Random rnd, String tag) {
    var cmd = new ArrayList<String>(List.of("sleep", Integer.toString(1 + rnd.nextInt(1000))));
    for (int i = rnd.nextInt(3); i > 0; i--) {
      cmd.add("--arg" + rnd.nextInt(100) + "=" + Long.toHexString(rnd.nextLong()));
    }
    int gpus = rnd.nextInt(10) < 4 ? 0 : 1 + rnd.nextInt(8);
    return new Sent(tag, List.copyOf(cmd), gpus);
  }

  /**
   * Submits one job (or a batch when {@code jobs} has several); records the ids of a 201. Returns
   * the reply, or null when the request failed in transport (the server went away).
   */
  TestApi.Reply submit(TestApi api, List<Sent> jobs, boolean asBatch) {
    TestApi.Reply reply =
        call(
            () ->
                asBatch
                    ? api.post("/api/v1/jobs", jobs.stream().map(Sent::body).toList())
                    : api.post("/api/v1/jobs", jobs.get(0).body()));
    if (reply != null && reply.status() == 201) {
      List<Long> ids =
          asBatch
              ? reply.as(new TypeReference<List<SubmitResult>>() {}).stream()
                  .map(SubmitResult::id)
                  .toList()
              : List.of(reply.as(SubmitResult.class).id());
      if (ids.size() != jobs.size()) {
        duplicates.add("a batch of " + jobs.size() + " was acknowledged with ids " + ids);
      }
      for (int i = 0; i < Math.min(ids.size(), jobs.size()); i++) {
        Sent previous = byId.putIfAbsent(ids.get(i), jobs.get(i));
        if (previous != null) {
          duplicates.add(
              "id " + ids.get(i) + " acknowledged for " + previous + " and " + jobs.get(i));
        }
      }
    }
    return reply;
  }

  /** Adds another set's acknowledgements (a later round's), noting ids acknowledged twice. */
  void merge(Acks other) {
    duplicates.addAll(other.duplicates);
    other.byId.forEach(
        (id, sent) -> {
          Sent previous = byId.putIfAbsent(id, sent);
          if (previous != null) {
            duplicates.add("id " + id + " acknowledged for " + previous + " and " + sent);
          }
        });
  }

  /** The reply, or null when the request failed in transport (TestApi wraps IOExceptions). */
  static TestApi.Reply call(Supplier<TestApi.Reply> request) {
    try {
      return request.get();
    } catch (AssertionError e) {
      if (e.getCause() instanceof java.io.IOException) {
        return null;
      }
      throw e;
    }
  }

  /** Every job this replica lists, by id; fails on a listed id that appears twice. */
  static Map<Long, JobView> listed(TestApi api) {
    var reply = api.get("/api/v1/jobs?limit=1000000");
    if (reply.status() != 200) {
      throw new AssertionError("GET /api/v1/jobs answered " + reply.status() + ": " + reply.body());
    }
    var byId = new HashMap<Long, JobView>();
    for (JobView j : reply.as(new TypeReference<List<JobView>>() {})) {
      if (byId.put(j.id(), j) != null) {
        throw new AssertionError("job id " + j.id() + " is listed twice");
      }
    }
    return byId;
  }

  /** Acknowledged jobs missing from {@code listed} or listed with another name or command. */
  List<String> lostOrChanged(Map<Long, JobView> listed) {
    var problems = new ArrayList<String>();
    byId.forEach(
        (id, sent) -> {
          JobView j = listed.get(id);
          if (j == null) {
            problems.add("acknowledged job " + id + " (" + sent.name() + ") is missing");
          } else if (!sent.name().equals(j.name())
              || !sent.command().equals(j.command())
              || sent.gpus() != j.gpus()) {
            problems.add(
                "job "
                    + id
                    + " was sent as "
                    + sent
                    + " but reads "
                    + j.name()
                    + " "
                    + j.command()
                    + " gpus="
                    + j.gpus());
          }
        });
    Collections.sort(problems);
    return problems;
  }
}
