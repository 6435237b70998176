package io.kairos.control;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kairos.control.health.PhiAccrualDetector;
import io.kairos.protocol.JobView;
import io.kairos.protocol.agent.Registered;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed requests against a real controller (in-process, Ratis on a temp dir): every one is
 * answered 4xx (never 5xx) as {@code application/problem+json} with status, title and detail,
 * naming the field at fault where there is one, and changes nothing. Then a seeded fuzz over a
 * valid submission.
 *
 * <p>Oversized bodies: the server answers 413 as soon as the declared length (or, for a chunked
 * body, the bytes read so far) passes 16 MiB, without reading the rest, and then closes the
 * connection ({@code Connection: close}). The test requires the 413 to arrive; a client still
 * writing may see its writes fail after it, which is accepted.
 */
class BadInputTest {
  @TempDir static Path dir;
  static Controller controller;
  static TestApi admin;
  static TestApi agent;

  @BeforeAll
  static void start() throws Exception {
    // n1 never heartbeats: a patient failure detector keeps it UP, so that the node epochs and
    // states in the fingerprint change only when a request changes them.
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0)
                .withRunAs(TestApi.SINGLE_USER)
                .withDetection(new PhiAccrualDetector.Settings(8.0, 1000, 100, 3_600_000, 1_000))
                .withLease(io.kairos.control.agent.LeaseSettings.PATIENT));
    admin = new TestApi(controller.url(), controller.adminToken());
    agent = admin.as(controller.joinToken());
    Leaders.awaitLeader(controller, java.time.Duration.ofSeconds(30));
    var reg = agent.post("/api/v1/agents/register", ControllerApiTest.node("n1", 2));
    assertThat(reg.status()).as(reg.body()).isEqualTo(200);
    assertThat(reg.as(Registered.class).epoch()).isPositive();
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  /** One malformed request; {@code field} null: the reply need not name one. */
  record Case(
      String name,
      String method,
      String path,
      byte[] body,
      boolean asAgent,
      int status,
      String field) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Case job(String name, String body, String field) {
    return new Case(name, "POST", "/api/v1/jobs", body.getBytes(UTF_8), false, 400, field);
  }

  static Case job(String name, byte[] body, String field) {
    return new Case(name, "POST", "/api/v1/jobs", body, false, 400, field);
  }

  static Case post(String name, String path, String body, int status, String field) {
    return new Case(name, "POST", path, body.getBytes(UTF_8), false, status, field);
  }

  static Case agentPost(String name, String path, String body, String field) {
    return new Case(name, "POST", path, body.getBytes(UTF_8), true, 400, field);
  }

  static Case get(String name, String path, int status, String field) {
    return new Case(name, "GET", path, null, false, status, field);
  }

  static final String CMD = "\"command\":[\"python3\",\"train.py\"]";

  static Stream<Case> cases() {
    return Stream.concat(basicCases(), stopAndPlacementCases());
  }

  static Stream<Case> basicCases() {
    return Stream.of(
        // wrong types
        job("gpus as a word", "{" + CMD + ",\"gpus\":\"two\"}", "gpus"),
        // tenancy fields on a controller without a tenancy file
        job(
            "a priority class without tenancy",
            "{" + CMD + ",\"priorityClass\":\"high\"}",
            "priorityClass"),
        job("an account as a number", "{" + CMD + ",\"account\":[1]}", "account"),
        job("an account with a space", "{" + CMD + ",\"account\":\"a b\"}", "account"),
        job("gpus as a fraction", "{" + CMD + ",\"gpus\":1.5}", "gpus"),
        job("gpus in exponent form", "{" + CMD + ",\"gpus\":1e9}", "gpus"),
        job("gpus as a boolean", "{" + CMD + ",\"gpus\":true}", "gpus"),
        job("gpus as an array", "{" + CMD + ",\"gpus\":[1]}", "gpus"),
        job("command as one string", "{\"command\":\"sleep 1\"}", "command"),
        job("command as an object", "{\"command\":{\"a\":\"b\"}}", "command"),
        job("env as an array", "{" + CMD + ",\"env\":[1]}", "env"),
        job("env value as an object", "{" + CMD + ",\"env\":{\"A\":{\"b\":1}}}", "env.A"),
        job("priority as a boolean", "{" + CMD + ",\"priority\":true}", "priority"),
        job("memoryMb as a fraction", "{" + CMD + ",\"memoryMb\":1.0}", "memoryMb"),
        job("name as an array", "{" + CMD + ",\"name\":[\"a\"]}", "name"),
        // out of range
        job("gpus past int", "{" + CMD + ",\"gpus\":2147483648}", "gpus"),
        job("gpus of 30 digits", "{" + CMD + ",\"gpus\":999999999999999999999999999999}", "gpus"),
        job("gpus negative", "{" + CMD + ",\"gpus\":-1}", "gpus"),
        job("gpus over the cluster limit", "{" + CMD + ",\"gpus\":4097,\"gpusPerNode\":1}", "gpus"),
        job("gpus past one node without gpusPerNode", "{" + CMD + ",\"gpus\":65}", "gpus"),
        job("gpusPerNode zero", "{" + CMD + ",\"gpus\":8,\"gpusPerNode\":0}", "gpusPerNode"),
        job(
            "gpus not a multiple of gpusPerNode",
            "{" + CMD + ",\"gpus\":12,\"gpusPerNode\":8}",
            "gpusPerNode"),
        job("timeLimit of 99999999 days", "{" + CMD + ",\"timeLimit\":\"99999999d\"}", "timeLimit"),
        job("timeLimit zero", "{" + CMD + ",\"timeLimit\":\"0\"}", "timeLimit"),
        job("timeLimit not a duration", "{" + CMD + ",\"timeLimit\":\"forever\"}", "timeLimit"),
        job(
            "timeLimit with 12 digits",
            "{" + CMD + ",\"timeLimit\":\"999999999999\"}",
            "timeLimit"),
        job("cpus negative", "{" + CMD + ",\"cpus\":-1}", "cpus"),
        job("memoryMb negative", "{" + CMD + ",\"memoryMb\":-1}", "memoryMb"),
        job("nothing asked for", "{" + CMD + ",\"gpus\":0,\"cpus\":0}", "cpus"),
        job("priority too high", "{" + CMD + ",\"priority\":2000000}", "priority"),
        job(
            "command of 20,000 arguments",
            "{\"command\":[" + "\"a\",".repeat(19_999) + "\"a\"]}",
            "command"),
        job(
            "an argument of 9,000 characters",
            "{\"command\":[\"" + "a".repeat(9_000) + "\"]}",
            "command[0]"),
        job("name of 200 characters", "{" + CMD + ",\"name\":\"" + "n".repeat(200) + "\"}", "name"),
        job("env of 1100 entries", "{" + CMD + ",\"env\":{" + envEntries(1100) + "}}", "env"),
        job("a string of 2 MiB", "{" + CMD + ",\"name\":\"" + "n".repeat(2 << 20) + "\"}", null),
        // Slurm's fields: a batch script, a node count, a QOS
        job("script without #!", "{" + CMD + ",\"script\":\"echo hi\\n\"}", "script"),
        job("script with NUL", "{" + CMD + ",\"script\":\"#!/bin/sh\\u0000\"}", "script"),
        new Case(
            "script of 5 MiB",
            "POST",
            "/api/v1/jobs",
            ("{" + CMD + ",\"script\":\"#!/bin/sh\\n" + "x".repeat(5 << 20) + "\"}")
                .getBytes(UTF_8),
            false,
            413,
            "script"),
        job("nodes 0", "{" + CMD + ",\"nodes\":0}", "nodes"),
        job("nodes that do not split the GPUs", "{" + CMD + ",\"gpus\":3,\"nodes\":2}", "nodes"),
        job(
            "nodes disagreeing with gpusPerNode",
            "{" + CMD + ",\"gpus\":4,\"gpusPerNode\":2,\"nodes\":3}",
            "nodes"),
        // elastic ranges
        job("maxGpus without gpusPerNode", "{" + CMD + ",\"gpus\":8,\"maxGpus\":32}", "maxGpus"),
        job(
            "maxGpus below gpus",
            "{" + CMD + ",\"gpus\":16,\"maxGpus\":8,\"gpusPerNode\":8}",
            "maxGpus"),
        job(
            "maxGpus not a multiple of gpusPerNode",
            "{" + CMD + ",\"gpus\":8,\"maxGpus\":20,\"gpusPerNode\":8}",
            "maxGpus"),
        job(
            "maxGpus over the cluster limit",
            "{" + CMD + ",\"gpus\":8,\"maxGpus\":8192,\"gpusPerNode\":8}",
            "maxGpus"),
        job(
            "maxGpus as a range string",
            "{" + CMD + ",\"gpus\":8,\"maxGpus\":\"8-32\"}",
            "maxGpus"),
        job(
            "maxGpus with a batch script",
            "{"
                + CMD
                + ",\"gpus\":8,\"maxGpus\":16,\"gpusPerNode\":8,\"script\":\"#!/bin/sh\\ntrue\"}",
            "maxGpus"),
        job(
            "maxGpus with ntasks",
            "{" + CMD + ",\"gpus\":8,\"maxGpus\":16,\"gpusPerNode\":8,\"ntasks\":2}",
            "ntasks"),
        // checkpoint declarations
        job("checkpoint as a word", "{" + CMD + ",\"checkpoint\":\"yes\"}", "checkpoint"),
        job(
            "checkpoint with an unknown key",
            "{" + CMD + ",\"checkpoint\":{\"evry\":\"1m\"}}",
            "checkpoint.evry"),
        job(
            "checkpoint signal KILL",
            "{" + CMD + ",\"checkpoint\":{\"signal\":\"KILL\"}}",
            "checkpoint.signal"),
        job(
            "checkpoint timeout of 2 hours",
            "{" + CMD + ",\"checkpoint\":{\"timeout\":\"2h\"}}",
            "checkpoint.timeout"),
        job(
            "checkpoint timeout not a duration",
            "{" + CMD + ",\"checkpoint\":{\"timeout\":\"soon\"}}",
            "checkpoint.timeout"),
        job(
            "checkpoint every 8 days",
            "{" + CMD + ",\"checkpoint\":{\"every\":\"8d\"}}",
            "checkpoint.every"),
        job("checkpoint keep 0", "{" + CMD + ",\"checkpoint\":{\"keep\":0}}", "checkpoint.keep"),
        job(
            "checkpoint keep 101",
            "{" + CMD + ",\"checkpoint\":{\"keep\":101}}",
            "checkpoint.keep"),
        job(
            "checkpoint keep as a word",
            "{" + CMD + ",\"checkpoint\":{\"keep\":\"all\"}}",
            "checkpoint.keep"),
        // bad values
        job("command empty", "{\"command\":[]}", "command"),
        job("program blank", "{\"command\":[\" \"]}", "command[0]"),
        job("argument null", "{\"command\":[\"x\",null]}", "command[1]"),
        job("argument with NUL", "{\"command\":[\"x\\u0000\"]}", "command[0]"),
        // arrays and dependencies
        job("array empty", "{" + CMD + ",\"array\":\"\"}", "array"),
        job("array range backwards", "{" + CMD + ",\"array\":\"5-1\"}", "array"),
        job("array of 20,001 elements", "{" + CMD + ",\"array\":\"0-20000\"}", "array"),
        job("array index past the largest", "{" + CMD + ",\"array\":\"4000001\"}", "array"),
        job("array limit zero", "{" + CMD + ",\"array\":\"0-4%0\"}", "array"),
        job("array step zero", "{" + CMD + ",\"array\":\"0-4:0\"}", "array"),
        job("array of words", "{" + CMD + ",\"array\":\"a-b\"}", "array"),
        job("array as a number", "{" + CMD + ",\"array\":[1]}", "array"),
        job("array in a batch", "[{" + CMD + "},{" + CMD + ",\"array\":\"1,,2\"}]", "[1].array"),
        job(
            "batch of arrays past 10,000 jobs",
            "[{" + CMD + ",\"array\":\"0-9999\"},{" + CMD + ",\"array\":\"0-1\"}]",
            null),
        job("dependency without a job", "{" + CMD + ",\"dependency\":\"afterok\"}", "dependency"),
        job("dependency on a word", "{" + CMD + ",\"dependency\":\"afterok:x\"}", "dependency"),
        job(
            "dependency of an unknown kind",
            "{" + CMD + ",\"dependency\":\"before:1\"}",
            "dependency"),
        job(
            "dependency mixing ',' and '?'",
            "{" + CMD + ",\"dependency\":\"afterok:1,afterany:1?after:1\"}",
            "dependency"),
        job(
            "dependency on an array element by index",
            "{" + CMD + ",\"dependency\":\"afterok:1_2\"}",
            "dependency"),
        job("dependency singleton", "{" + CMD + ",\"dependency\":\"singleton\"}", "dependency"),
        job(
            "dependency on an unknown job",
            "{" + CMD + ",\"dependency\":\"afterok:999999\"}",
            "dependency"),
        job(
            "dependency on an unknown job in a batch",
            "[{" + CMD + "},{" + CMD + ",\"dependency\":\"afterany:888888\"}]",
            "[1].dependency"),
        job("env name starting with a digit", "{" + CMD + ",\"env\":{\"1A\":\"x\"}}", "env.1A"),
        job("env value null", "{" + CMD + ",\"env\":{\"A\":null}}", "env.A"),
        job("name with a newline", "{" + CMD + ",\"name\":\"a\\nb\"}", "name"),
        job("relative workdir", "{" + CMD + ",\"workdir\":\"tmp\"}", "workdir"),
        job("relative output", "{" + CMD + ",\"output\":\"slurm-%j.out\"}", "output"),
        job("output with an unknown pattern", "{" + CMD + ",\"output\":\"/l/%q.out\"}", "output"),
        job("output ending in a lone %", "{" + CMD + ",\"output\":\"/l/x%\"}", "output"),
        job("error with a width pattern", "{" + CMD + ",\"error\":\"/l/%3t.err\"}", "error"),
        job("output with NUL", "{" + CMD + ",\"output\":\"/l/\\u0000\"}", "output"),
        job(
            "batch with a bad error pattern",
            "[{" + CMD + "},{" + CMD + ",\"error\":\"/l/%Z\"}]",
            "[1].error"),
        job("queue with capitals and a space", "{" + CMD + ",\"queue\":\"My Queue\"}", "queue"),
        job("user name with a space", "{" + CMD + ",\"user\":\"b b\"}", "user"),
        // shape of the body
        job("unknown field", "{" + CMD + ",\"gpu\":1}", "gpu"),
        job("missing command", "{\"gpus\":1}", "command"),
        job("empty object", "{}", "command"),
        job("empty body", "", null),
        job("null", "null", null),
        job("empty batch", "[]", null),
        job("batch of null", "[null]", "[0]"),
        job("batch of a number", "[1]", "[0]"),
        job("batch with one bad job", "[{" + CMD + "},{" + CMD + ",\"gpus\":\"x\"}]", "[1].gpus"),
        job("batch of 10,001", "[" + ("{" + CMD + "},").repeat(10_000) + "{" + CMD + "}]", null),
        job("a string", "\"str\"", null),
        job("a number", "123", null),
        job("true", "true", null),
        job("deeply nested arrays", "[".repeat(100_000) + "]".repeat(100_000), null),
        job(
            "deeply nested objects in env",
            "{" + CMD + ",\"env\":" + "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_001),
            null),
        job(
            "deeply nested objects under an unknown field",
            "{\"x\":" + "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_001),
            null),
        job("trailing garbage", "{" + CMD + "} garbage", null),
        job("trailing brace", "{" + CMD + "}}", null),
        job("two objects", "{" + CMD + "}{" + CMD + "}", null),
        job("single quotes", "{'command':['x']}", null),
        job("a comment", "{" + CMD + "} /* c */", null),
        job("NaN", "{" + CMD + ",\"gpus\":NaN}", null),
        job("leading zero", "{" + CMD + ",\"gpus\":01}", null),
        job("unterminated string", "{\"command\":[\"x", null),
        job("truncated", "{\"command\":[\"x\"],\"gp", null),
        job("invalid UTF-8 start byte", bytes("{\"command\":[\"", 0xC3, 0x28, "\"]}"), null),
        job("invalid UTF-8 byte 0xFF", bytes("{\"command\":[\"", 0xFF, 0xFE, "\"]}"), null),
        job("overlong UTF-8", bytes("{\"command\":[\"", 0xC0, 0xAF, "\"]}"), null),
        job("UTF-8 encoded surrogate", bytes("{\"command\":[\"", 0xED, 0xA0, 0x80, "\"]}"), null),
        job("invalid UTF-8 outside strings", bytes("{", 0xFF, "}"), null),
        // path and query parameters
        get("job id not a number", "/api/v1/jobs/abc", 400, "id"),
        get("job id negative", "/api/v1/jobs/-1", 400, "id"),
        get("job id zero", "/api/v1/jobs/0", 400, "id"),
        get("job id past long", "/api/v1/jobs/99999999999999999999", 400, "id"),
        get("job id unknown", "/api/v1/jobs/987654321", 404, null),
        post("cancel with a bad id", "/api/v1/jobs/abc/cancel", "", 400, "id"),
        post("cancel an unknown job", "/api/v1/jobs/987654321/cancel", "", 404, null),
        get("logs with a bad id", "/api/v1/jobs/1e3/logs", 400, "id"),
        get("logs of task -1", "/api/v1/jobs/1/logs?task=-1", 400, "task"),
        get("logs from offset -5", "/api/v1/jobs/1/logs?offset=-5", 400, "offset"),
        get("logs of stream stdin", "/api/v1/jobs/1/logs?stream=stdin", 400, "stream"),
        get("state BOGUS", "/api/v1/jobs?state=BOGUS", 400, "state"),
        get("state list with one bad", "/api/v1/jobs?state=PENDING,nope", 400, "state"),
        get("limit -1", "/api/v1/jobs?limit=-1", 400, "limit"),
        get("limit zero", "/api/v1/jobs?limit=0", 400, "limit"),
        get("limit past int", "/api/v1/jobs?limit=99999999999", 400, "limit"),
        get("limit not a number", "/api/v1/jobs?limit=ten", 400, "limit"),
        get("no such endpoint", "/api/v1/jobz", 404, null),
        // tokens
        post("token without user", "/api/v1/tokens", "{}", 400, "user"),
        post("token user null", "/api/v1/tokens", "{\"user\":null}", 400, "user"),
        post("token user empty", "/api/v1/tokens", "{\"user\":\"\"}", 400, "user"),
        post("token user with a space", "/api/v1/tokens", "{\"user\":\"a b\"}", 400, "user"),
        post(
            "token user too long",
            "/api/v1/tokens",
            "{\"user\":\"" + "u".repeat(70) + "\"}",
            400,
            "user"),
        post(
            "token admin as a word",
            "/api/v1/tokens",
            "{\"user\":\"x\",\"admin\":\"yes\"}",
            400,
            "admin"),
        post(
            "token unknown field",
            "/api/v1/tokens",
            "{\"user\":\"x\",\"role\":\"admin\"}",
            400,
            "role"),
        post("token empty body", "/api/v1/tokens", "", 400, null),
        post("token as an array", "/api/v1/tokens", "[{\"user\":\"x\"}]", 400, null),
        // drain and resume
        post(
            "drain reason too long",
            "/api/v1/nodes/n1/drain",
            "{\"reason\":\"" + "r".repeat(300) + "\"}",
            400,
            "reason"),
        post(
            "drain reason with a control character",
            "/api/v1/nodes/n1/drain",
            "{\"reason\":\"a\\u0007\"}",
            400,
            "reason"),
        post(
            "drain reason as an array",
            "/api/v1/nodes/n1/drain",
            "{\"reason\":[\"x\"]}",
            400,
            "reason"),
        post("drain unknown field", "/api/v1/nodes/n1/drain", "{\"why\":\"x\"}", 400, "why"),
        post("drain garbage", "/api/v1/nodes/n1/drain", "{reason", 400, null),
        post("drain an unknown node", "/api/v1/nodes/n9/drain", "", 404, null),
        post("resume an unknown node", "/api/v1/nodes/n9/resume", "", 404, null),
        // agents
        agentPost("register nothing", "/api/v1/agents/register", "{}", null),
        agentPost(
            "register without a node name",
            "/api/v1/agents/register",
            registration("n2", "http://127.0.0.1:1", gpus(1, 1L << 30), 1)
                .replace("\"node\":\"n2\",", ""),
            "node"),
        agentPost(
            "register a bad node name",
            "/api/v1/agents/register",
            registration("bad name!", "http://127.0.0.1:1", gpus(1, 1L << 30), 1),
            "node"),
        agentPost(
            "register a bad address",
            "/api/v1/agents/register",
            registration("n2", "ftp://x", gpus(1, 1L << 30), 1),
            "address"),
        agentPost(
            "register without gpus",
            "/api/v1/agents/register",
            registration("n2", "http://127.0.0.1:1", "null", 1),
            "gpus"),
        agentPost(
            "register 65 GPUs",
            "/api/v1/agents/register",
            registration("n2", "http://127.0.0.1:1", gpus(65, 1L << 30), 65),
            "gpus"),
        agentPost(
            "register GPUs out of index order",
            "/api/v1/agents/register",
            registration(
                "n2",
                "http://127.0.0.1:1",
                "[{\"index\":1,\"uuid\":\"u\",\"model\":\"H100\",\"memoryBytes\":1}]",
                1),
            "gpus[0]"),
        agentPost(
            "register a GPU with negative memory",
            "/api/v1/agents/register",
            registration("n2", "http://127.0.0.1:1", gpus(2, -1), 2),
            "gpus[0]"),
        agentPost(
            "register a GPU without a model",
            "/api/v1/agents/register",
            registration(
                "n2", "http://127.0.0.1:1", "[{\"index\":0,\"uuid\":\"u\",\"memoryBytes\":1}]", 1),
            "gpus[0]"),
        agentPost(
            "register an NVLink domain that does not divide the GPUs",
            "/api/v1/agents/register",
            registration("n2", "http://127.0.0.1:1", gpus(8, 1L << 30), 3),
            "nvlinkDomainSize"),
        agentPost(
            "register with cpus as a word",
            "/api/v1/agents/register",
            "{\"node\":\"n2\",\"cpus\":\"many\"}",
            "cpus"),
        agentPost(
            "register an unknown field",
            "/api/v1/agents/register",
            registration("n2", "http://127.0.0.1:1", gpus(1, 1L << 30), 1)
                .replace("{\"node\"", "{\"colour\":\"red\",\"node\""),
            "colour"),
        agentPost("heartbeat nothing", "/api/v1/agents/heartbeat", "{}", null),
        agentPost(
            "heartbeat without a node",
            "/api/v1/agents/heartbeat",
            "{\"epoch\":1,\"tasks\":[],\"waitMs\":0}",
            "node"),
        agentPost(
            "heartbeat without tasks",
            "/api/v1/agents/heartbeat",
            "{\"node\":\"n1\",\"epoch\":1,\"waitMs\":0}",
            "tasks"),
        agentPost(
            "heartbeat with a null task",
            "/api/v1/agents/heartbeat",
            "{\"node\":\"n1\",\"epoch\":1,\"tasks\":[null],\"waitMs\":0}",
            "tasks[0]"),
        agentPost(
            "heartbeat with an empty task",
            "/api/v1/agents/heartbeat",
            "{\"node\":\"n1\",\"epoch\":1,\"tasks\":[{}],\"waitMs\":0}",
            "tasks[0].jobId"),
        agentPost(
            "heartbeat with a task without status",
            "/api/v1/agents/heartbeat",
            "{\"node\":\"n1\",\"epoch\":1,\"tasks\":[{\"jobId\":1,\"attempt\":1,\"task\":0}],"
                + "\"waitMs\":0}",
            "tasks[0]"),
        agentPost(
            "heartbeat with a bad task status",
            "/api/v1/agents/heartbeat",
            "{\"node\":\"n1\",\"epoch\":1,\"tasks\":[{\"jobId\":1,\"attempt\":1,\"task\":0,"
                + "\"status\":\"DANCING\"}],\"waitMs\":0}",
            "tasks[0].status"),
        agentPost(
            "heartbeat epoch as a word",
            "/api/v1/agents/heartbeat",
            "{\"node\":\"n1\",\"epoch\":\"one\",\"tasks\":[],\"waitMs\":0}",
            "epoch"));
  }

  /**
   * The fields that say how a job stops, restarts and where it may not run (killSignal,
   * gracePeriod, warnSignal, checkpointDir, maxRestarts, excludeNodes). Besides the field, each
   * refusal says how to fix it ({@link #aRefusedStopOrPlacementFieldSaysHowToFixIt}).
   */
  static Stream<Case> stopAndPlacementCases() {
    return Stream.of(
        job(
            "killSignal KILL (cannot be caught)",
            "{" + CMD + ",\"killSignal\":\"KILL\"}",
            "killSignal"),
        job("killSignal STOP", "{" + CMD + ",\"killSignal\":\"STOP\"}", "killSignal"),
        job("killSignal empty", "{" + CMD + ",\"killSignal\":\"\"}", "killSignal"),
        job("killSignal as the number 15", "{" + CMD + ",\"killSignal\":15}", "killSignal"),
        job("killSignal SIGFOO", "{" + CMD + ",\"killSignal\":\"SIGFOO\"}", "killSignal"),
        job("gracePeriod zero", "{" + CMD + ",\"gracePeriod\":\"0\"}", "gracePeriod"),
        job("gracePeriod negative", "{" + CMD + ",\"gracePeriod\":\"-1\"}", "gracePeriod"),
        job("gracePeriod over an hour", "{" + CMD + ",\"gracePeriod\":\"2h\"}", "gracePeriod"),
        job("gracePeriod not a duration", "{" + CMD + ",\"gracePeriod\":\"abc\"}", "gracePeriod"),
        job(
            "warnSignal with a time that is not a duration",
            "{" + CMD + ",\"warnSignal\":\"USR1@abc\"}",
            "warnSignal"),
        job("warnSignal at 0 seconds", "{" + CMD + ",\"warnSignal\":\"USR1@0\"}", "warnSignal"),
        job(
            "warnSignal before a 1h time limit starts",
            "{" + CMD + ",\"timeLimit\":\"1h\",\"warnSignal\":\"USR1@99999\"}",
            "warnSignal"),
        job("warnSignal KILL", "{" + CMD + ",\"warnSignal\":\"KILL@10\"}", "warnSignal"),
        job(
            "checkpointDir relative",
            "{" + CMD + ",\"checkpointDir\":\"ckpt/run1\"}",
            "checkpointDir"),
        job(
            "checkpointDir with NUL",
            "{" + CMD + ",\"checkpointDir\":\"/ckpt/a\\u0000b\"}",
            "checkpointDir"),
        job(
            "checkpointDir in an upper-case bucket",
            "{" + CMD + ",\"checkpointDir\":\"s3://Bucket/run1\"}",
            "checkpointDir"),
        job(
            "checkpointDir in S3 leaving its prefix",
            "{" + CMD + ",\"checkpointDir\":\"s3://bucket/a/../b\"}",
            "checkpointDir"),
        job(
            "checkpointDir with another scheme",
            "{" + CMD + ",\"checkpointDir\":\"gs://bucket/run1\"}",
            "checkpointDir"),
        job("maxRestarts negative", "{" + CMD + ",\"maxRestarts\":-1}", "maxRestarts"),
        job("maxRestarts 101", "{" + CMD + ",\"maxRestarts\":101}", "maxRestarts"),
        job("maxRestarts as a string", "{" + CMD + ",\"maxRestarts\":\"2\"}", "maxRestarts"),
        job("excludeNodes as one string", "{" + CMD + ",\"excludeNodes\":\"n1\"}", "excludeNodes"),
        job(
            "excludeNodes with null",
            "{" + CMD + ",\"excludeNodes\":[\"n1\",null]}",
            "excludeNodes[1]"),
        job(
            "excludeNodes with a path",
            "{" + CMD + ",\"excludeNodes\":[\"n1\",\"../x\"]}",
            "excludeNodes[1]"),
        job(
            "excludeNodes of 5000 nodes",
            "{" + CMD + ",\"excludeNodes\":[" + nodeNames(5000) + "]}",
            "excludeNodes"),
        job(
            "batch with a bad excludeNodes",
            "[{" + CMD + "},{" + CMD + ",\"excludeNodes\":[\"a b\"]}]",
            "[1].excludeNodes[0]"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void aMalformedRequestIsRefusedWithAProblemAndChangesNothing(Case c) {
    var before = fingerprint();
    TestApi who =
        !c.asAgent() ? admin : c.path().endsWith("/heartbeat") ? admin.asNode("n1") : agent;
    TestApi.Reply reply =
        c.method().equals("GET") ? who.get(c.path()) : who.postBytes(c.path(), c.body());

    assertProblem(reply, c.status(), c.field());
    assertThat(fingerprint()).as("state after %s", c.name()).isEqualTo(before);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stopAndPlacementCases")
  void aRefusedStopOrPlacementFieldSaysHowToFixIt(Case c) throws IOException {
    var before = fingerprint();
    TestApi.Reply reply = admin.postBytes(c.path(), c.body());

    assertProblem(reply, 400, c.field());
    assertThat(TestApi.JSON.readTree(reply.body()).path("fix").asText())
        .as(reply.body())
        .isNotBlank();
    assertThat(fingerprint()).isEqualTo(before);
  }

  /** A valid value of a stop or placement field, and what the job view then shows. */
  record Accepted(String name, String fields, String viewField, String shown) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Accepted> acceptedStopAndPlacementFields() {
    return Stream.of(
        new Accepted("killSignal in lower case", "\"killSignal\":\"term\"", null, null),
        new Accepted("killSignal with SIG", "\"killSignal\":\"SIGINT\"", null, null),
        new Accepted("killSignal USR1", "\"killSignal\":\"USR1\"", null, null),
        new Accepted("gracePeriod 90s", "\"gracePeriod\":\"90s\"", null, null),
        new Accepted("gracePeriod 1:00", "\"gracePeriod\":\"1:00\"", null, null),
        new Accepted("gracePeriod of exactly an hour", "\"gracePeriod\":\"1h\"", null, null),
        // Like timeLimit, a duration may be given as a number of seconds (the API's reader turns
        // a JSON integer into a string field's text); so a number is not refused.
        new Accepted("gracePeriod as the number 30", "\"gracePeriod\":30", null, null),
        new Accepted("warnSignal USR1", "\"warnSignal\":\"USR1\"", null, null),
        new Accepted("warnSignal USR1@120", "\"warnSignal\":\"USR1@120\"", null, null),
        new Accepted("maxRestarts 100", "\"maxRestarts\":100", null, null),
        new Accepted(
            "checkpointDir", "\"checkpointDir\":\"/ckpt/run1\"", "checkpointDir", "\"/ckpt/run1\""),
        new Accepted(
            "checkpointDir in S3",
            "\"checkpointDir\":\"s3://ckpt-bucket/run1\"",
            "checkpointDir",
            "\"s3://ckpt-bucket/run1\""),
        new Accepted(
            "excludeNodes",
            "\"excludeNodes\":[\"n9\",\"gpu-01.rack_2\"]",
            "excludeNodes",
            "[\"gpu-01.rack_2\",\"n9\"]"),
        new Accepted("excludeNodes empty", "\"excludeNodes\":[]", "excludeNodes", null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("acceptedStopAndPlacementFields")
  void aValidStopOrPlacementFieldIsAcceptedAndShown(Accepted a) throws IOException {
    long nextId = nextJobId();
    var reply = admin.post("/api/v1/jobs", "{" + CMD + ",\"cpus\":1," + a.fields() + "}");

    assertThat(reply.status()).as(reply.body()).isEqualTo(201);
    long id = TestApi.JSON.readTree(reply.body()).path("id").asLong();
    assertThat(id).isEqualTo(nextId);
    var view = admin.get("/api/v1/jobs/" + id);
    assertThat(view.status()).as(view.body()).isEqualTo(200);
    assertThat(view.as(JobView.class).id()).isEqualTo(id);
    if (a.viewField() != null) {
      JsonNode shown = TestApi.JSON.readTree(view.body()).path(a.viewField());
      if (a.shown() == null) {
        assertThat(shown.isMissingNode())
            .as("%s left out of %s", a.viewField(), view.body())
            .isTrue();
      } else {
        assertThat(shown).as(view.body()).isEqualTo(TestApi.JSON.readTree(a.shown()));
      }
    }
  }

  // --- oversized bodies --------------------------------------------------------------------

  @Test
  void aBodyOver16MiBIsRefusedWith413() {
    byte[] body = new byte[(16 << 20) + 1024];
    Arrays.fill(body, (byte) ' ');
    byte[] json = ("{" + CMD + "}").getBytes(UTF_8);
    System.arraycopy(json, 0, body, body.length - json.length, json.length);
    var before = fingerprint();

    var reply = admin.postBytes("/api/v1/jobs", body);

    assertProblem(reply, 413, null);
    assertThat(fingerprint()).isEqualTo(before);
  }

  /**
   * 100 MB announced, 1 KiB sent: the 413 arrives at once, so the server did not wait for (nor
   * buffer) the body; then it closes the connection.
   */
  @Test
  void aBodyAnnouncedAt100MBIsRefusedWith413BeforeItIsSent() throws IOException {
    var before = fingerprint();
    try (var socket = socket()) {
      var out = socket.getOutputStream();
      out.write(head("Content-Length: 104857600"));
      out.write(("{" + CMD + ",\"name\":\"" + "x".repeat(1000)).getBytes(UTF_8));
      out.flush();
      RawReply reply = RawReply.read(socket.getInputStream());
      assertThat(reply.status()).as(reply.text()).isEqualTo(413);
      assertThat(reply.header("content-type")).startsWith("application/problem+json");
      assertThat(reply.header("connection")).isEqualToIgnoringCase("close");
      assertProblemBody(TestApi.JSON.readTree(reply.body()), 413, null);
    }
    assertThat(fingerprint()).isEqualTo(before);
  }

  /** A chunked body (no length announced) is cut off at 16 MiB with a 413. */
  @Test
  void aChunkedBodyOver16MiBIsRefusedWith413() throws Exception {
    var before = fingerprint();
    try (var socket = socket()) {
      var out = socket.getOutputStream();
      out.write(head("Transfer-Encoding: chunked"));
      byte[] chunk = new byte[1 << 20];
      Arrays.fill(chunk, (byte) ' ');
      var writer =
          Thread.ofPlatform()
              .name("chunk-writer")
              .start(
                  () -> {
                    try {
                      for (int i = 0; i < 40; i++) {
                        out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(UTF_8));
                        out.write(chunk);
                        out.write("\r\n".getBytes(UTF_8));
                      }
                      out.write("0\r\n\r\n".getBytes(UTF_8));
                    } catch (IOException expected) {
                      // the server stopped reading after its 413 and closed the connection
                    }
                  });
      RawReply reply = RawReply.read(socket.getInputStream());
      writer.join(10_000);
      assertThat(reply.status()).as(reply.text()).isEqualTo(413);
      assertProblemBody(TestApi.JSON.readTree(reply.body()), 413, null);
    }
    assertThat(fingerprint()).isEqualTo(before);
  }

  /** The client announces 100 bytes, sends 17 and shuts its side: a 400, not a 500. */
  @Test
  void aBodyShorterThanAnnouncedIsABadRequest() throws IOException {
    var before = fingerprint();
    try (var socket = socket()) {
      socket.getOutputStream().write(head("Content-Length: 100"));
      socket.getOutputStream().write("{\"command\":[\"x\"".getBytes(UTF_8));
      socket.shutdownOutput();
      RawReply reply = RawReply.read(socket.getInputStream());
      assertThat(reply.status()).as(reply.text()).isEqualTo(400);
      assertProblemBody(TestApi.JSON.readTree(reply.body()), 400, null);
    }
    assertThat(fingerprint()).isEqualTo(before);
  }

  // --- fuzz ----------------------------------------------------------------------------------

  /**
   * 2,000 mutations of a valid submission (byte flips, truncations, random JSON values in random
   * fields, random Unicode, removed and unknown fields, batches). Every reply is 201 or a 4xx
   * problem; a 4xx creates no job, a 201 creates exactly the jobs it names, and they read back.
   * {@code -Dkairos.fuzz.seed=S} replays a run.
   */
  @Test
  void fuzzedSubmissionsAreAcceptedOrRefusedCleanly() {
    long seed = Long.getLong("kairos.fuzz.seed", 20_261_130L);
    int count = Integer.getInteger("kairos.fuzz.count", 2_000);
    System.out.println(
        "BadInputTest fuzz seed " + seed + " (replay: -Dkairos.fuzz.seed=" + seed + ")");
    var fuzz = new Fuzzer(new Random(seed));
    int accepted = 0;
    for (int i = 0; i < count; i++) {
      Fuzzer.Mutant m = fuzz.next();
      long nextId = nextJobId();
      TestApi.Reply reply = admin.postBytes("/api/v1/jobs", m.body());
      String where =
          "fuzz seed "
              + seed
              + ", case "
              + i
              + " ("
              + m.how()
              + "), body: "
              + printable(m.body())
              + "\nreply "
              + reply.status()
              + ": "
              + reply.body();
      try {
        if (reply.status() == 201) {
          accepted++;
          JsonNode ids = TestApi.JSON.readTree(reply.body());
          var list = ids.isArray() ? ids.findValues("id") : List.of(ids.get("id"));
          assertThat(nextJobId()).isEqualTo(nextId + list.size());
          for (JsonNode id : list) {
            var job = admin.get("/api/v1/jobs/" + id.asLong());
            assertThat(job.status()).as(job.body()).isEqualTo(200);
            assertThat(job.as(JobView.class).id()).isEqualTo(id.asLong());
          }
        } else {
          assertProblem(reply, -1, null);
          assertThat(nextJobId()).as("a refused submission created a job").isEqualTo(nextId);
        }
      } catch (AssertionError | IOException e) {
        fail(where + "\n" + e.getMessage(), e);
      }
    }
    System.out.println("BadInputTest fuzz: " + accepted + " of " + count + " accepted");
    assertThat(accepted).as("the fuzz also produces valid submissions").isBetween(1, count - 1);
  }

  // --- helpers -------------------------------------------------------------------------------

  /** What a refused request must not change: jobs, ids, tokens, nodes and their epochs. */
  record Fingerprint(int listed, long nextJobId, int tokens, List<String> nodes) {}

  static Fingerprint fingerprint() {
    var listed = admin.get("/api/v1/jobs?limit=1000000");
    assertThat(listed.status()).as(listed.body()).isEqualTo(200);
    int count = listed.as(new TypeReference<List<JobView>>() {}).size();
    return controller
        .replica()
        .stateMachine()
        .read(
            s ->
                new Fingerprint(
                    count,
                    s.nextJobId(),
                    nonJobTokens(s),
                    s.nodes().stream().map(n -> n.name + "@" + n.epoch + ":" + n.state).toList()));
  }

  /** Tokens other than jobs' step credentials (the scheduler mints those as it starts jobs). */
  static int nonJobTokens(io.kairos.control.state.ControlState s) {
    return (int)
        s.tokens().stream()
            .filter(t -> io.kairos.control.state.TokenRecord.scopedJob(t.scope()) <= 0)
            .count();
  }

  static long nextJobId() {
    return controller.replica().stateMachine().read(s -> s.nextJobId());
  }

  /** 4xx ({@code status} exactly unless -1), problem JSON, and the field when one is named. */
  static void assertProblem(TestApi.Reply reply, int status, String field) {
    if (status > 0) {
      assertThat(reply.status()).as("status; body %s", reply.body()).isEqualTo(status);
    } else {
      assertThat(reply.status()).as("status; body %s", reply.body()).isBetween(400, 499);
    }
    assertThat(reply.contentType()).as("content type").startsWith("application/problem+json");
    JsonNode body;
    try {
      body = TestApi.JSON.readTree(reply.body());
    } catch (IOException e) {
      throw new AssertionError("not JSON: " + reply.body(), e);
    }
    assertProblemBody(body, reply.status(), field);
  }

  static void assertProblemBody(JsonNode body, int status, String field) {
    assertThat(body.path("status").asInt()).as("status in %s", body).isEqualTo(status);
    assertThat(body.path("title").asText()).as("title in %s", body).isNotBlank();
    assertThat(body.path("detail").asText()).as("detail in %s", body).isNotBlank();
    if (field != null) {
      assertThat(body.path("field").asText(null)).as("field in %s", body).isEqualTo(field);
    }
  }

  static Socket socket() throws IOException {
    var uri = URI.create(controller.url());
    var socket = new Socket(uri.getHost(), uri.getPort());
    socket.setSoTimeout(10_000);
    return socket;
  }

  static byte[] head(String lengthHeader) {
    return ("POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + controller.adminToken()
            + "\r\nContent-Type: application/json\r\n"
            + lengthHeader
            + "\r\n\r\n")
        .getBytes(UTF_8);
  }

  /** An HTTP/1.1 reply read off a socket: the status line, headers and a Content-Length body. */
  record RawReply(int status, String text, byte[] body) {
    static RawReply read(InputStream in) throws IOException {
      var head = new ByteArrayOutputStream();
      int b;
      while ((b = in.read()) >= 0) {
        head.write(b);
        byte[] h = head.toByteArray();
        int n = h.length;
        if (n >= 4
            && h[n - 4] == '\r'
            && h[n - 3] == '\n'
            && h[n - 2] == '\r'
            && h[n - 1] == '\n') {
          break;
        }
      }
      String text = head.toString(UTF_8);
      if (!text.startsWith("HTTP/1.1 ")) {
        throw new AssertionError("no HTTP reply (connection closed early?): '" + text + "'");
      }
      int status = Integer.parseInt(text.substring(9, 12));
      var partial = new RawReply(status, text, new byte[0]);
      int length = Integer.parseInt(partial.header("content-length"));
      return new RawReply(status, text, in.readNBytes(length));
    }

    String header(String name) {
      for (String line : text.split("\r\n")) {
        int colon = line.indexOf(':');
        if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
          return line.substring(colon + 1).trim();
        }
      }
      return "";
    }
  }

  static byte[] bytes(Object... parts) {
    var out = new ByteArrayOutputStream();
    for (Object p : parts) {
      if (p instanceof String s) {
        out.writeBytes(s.getBytes(UTF_8));
      } else {
        out.write((Integer) p);
      }
    }
    return out.toByteArray();
  }

  static String envEntries(int n) {
    var sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? "" : ",").append("\"V").append(i).append("\":\"x\"");
    }
    return sb.toString();
  }

  static String nodeNames(int n) {
    var sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? "" : ",").append("\"node").append(i).append('"');
    }
    return sb.toString();
  }

  static String gpus(int n, long memory) {
    var sb = new StringBuilder("[");
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? "" : ",")
          .append("{\"index\":")
          .append(i)
          .append(",\"uuid\":\"u")
          .append(i)
          .append("\",\"model\":\"H100\",\"memoryBytes\":")
          .append(memory)
          .append('}');
    }
    return sb.append(']').toString();
  }

  static String registration(String node, String address, String gpus, int nvlink) {
    return "{\"node\":\""
        + node
        + "\",\"address\":\""
        + address
        + "\",\"gpus\":"
        + gpus
        + ",\"cpus\":8,\"memoryBytes\":1073741824,\"labels\":{},\"zone\":\"z\",\"block\":\"b\","
        + "\"rack\":\"r\",\"nvlinkDomainSize\":"
        + nvlink
        + "}";
  }

  /** The body for a failure message: text when it is UTF-8, else hex; clipped. */
  static String printable(byte[] body) {
    String text = new String(body, UTF_8);
    boolean clean = Arrays.equals(text.getBytes(UTF_8), body);
    String shown = clean ? text : "hex " + HexFormat.of().formatHex(body);
    return shown.length() > 2000
        ? shown.substring(0, 2000) + "... (" + body.length + " bytes)"
        : shown;
  }

  /** Mutations of a valid submission, from one seeded {@link Random}. */
  static final class Fuzzer {
    record Mutant(String how, byte[] body) {}

    private static final String[] FIELDS = {
      "name",
      "command",
      "env",
      "workdir",
      "gpus",
      "gpusPerNode",
      "cpus",
      "memoryMb",
      "timeLimit",
      "queue",
      "priority",
      "gpuModel",
      "user",
      "killSignal",
      "gracePeriod",
      "warnSignal",
      "checkpointDir",
      "maxRestarts",
      "excludeNodes"
    };
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private final Random rnd;

    Fuzzer(Random rnd) {
      this.rnd = rnd;
    }

    /** A valid submission that the 2-GPU node n1 could run. */
    ObjectNode valid() {
      ObjectNode o = NODES.objectNode();
      o.put("name", "fuzz-" + rnd.nextInt(1000));
      ArrayNode cmd = o.putArray("command");
      cmd.add("python3").add("train.py").add("--lr").add("0.1");
      o.putObject("env").put("A", "1").put("B_2", "two");
      o.put("workdir", "/tmp");
      o.put("gpus", 1 + rnd.nextInt(2));
      o.put("cpus", 1);
      o.put("memoryMb", 1024);
      o.put("timeLimit", "2h");
      o.put("queue", "research");
      o.put("priority", 5);
      o.put("gpuModel", "H100");
      o.put("user", "alice");
      o.put("killSignal", "TERM");
      o.put("gracePeriod", "30s");
      o.put("warnSignal", "USR1@60");
      o.put("checkpointDir", "/ckpt/fuzz");
      o.put("maxRestarts", 1);
      o.putArray("excludeNodes").add("n9");
      return o;
    }

    Mutant next() {
      ObjectNode o = valid();
      int kind = rnd.nextInt(9);
      return switch (kind) {
        case 0 -> {
          byte[] b = write(o);
          int flips = 1 + rnd.nextInt(4);
          for (int i = 0; i < flips; i++) {
            b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
          }
          yield new Mutant(flips + " byte flips", b);
        }
        case 1 -> {
          byte[] b = write(o);
          int at = rnd.nextInt(b.length);
          yield new Mutant("truncated at " + at, Arrays.copyOf(b, at));
        }
        case 2, 3 -> {
          String f = FIELDS[rnd.nextInt(FIELDS.length)];
          o.set(f, randomValue(3));
          yield new Mutant("random value for " + f, write(o));
        }
        case 4 -> {
          String f = stringField(o);
          yield new Mutant("random unicode in " + f, write(o));
        }
        case 5 -> {
          String f = FIELDS[rnd.nextInt(FIELDS.length)];
          o.remove(f);
          if (rnd.nextBoolean()) {
            o.set(randomString(8), randomValue(2));
            f += " and an unknown field added";
          }
          yield new Mutant("removed " + f, write(o));
        }
        case 6 -> {
          ArrayNode batch = NODES.arrayNode();
          int n = 1 + rnd.nextInt(4);
          for (int i = 0; i < n; i++) {
            ObjectNode j = valid();
            if (rnd.nextInt(3) == 0) {
              j.set(FIELDS[rnd.nextInt(FIELDS.length)], randomValue(2));
            }
            batch.add(rnd.nextInt(10) == 0 ? randomValue(1) : j);
          }
          yield new Mutant("batch of " + n, write(batch));
        }
        case 7 -> {
          byte[] b = write(o);
          int at = rnd.nextInt(b.length + 1);
          byte[] insert = write(randomValue(2));
          var out = new ByteArrayOutputStream();
          out.write(b, 0, at);
          out.writeBytes(insert);
          out.write(b, at, b.length - at);
          yield new Mutant("random JSON inserted at " + at, out.toByteArray());
        }
        default -> {
          byte[] b = write(o);
          int from = rnd.nextInt(b.length);
          int to = from + rnd.nextInt(b.length - from);
          var out = new ByteArrayOutputStream();
          out.write(b, 0, to);
          out.write(b, from, b.length - from);
          yield new Mutant("bytes " + from + ".." + to + " repeated", out.toByteArray());
        }
      };
    }

    /** Puts random Unicode into one string-valued place; returns which. */
    private String stringField(ObjectNode o) {
      return switch (rnd.nextInt(10)) {
        case 0 -> {
          o.put("name", randomString(1 + rnd.nextInt(40)));
          yield "name";
        }
        case 1 -> {
          ((ArrayNode) o.get("command")).set(rnd.nextInt(4), randomString(1 + rnd.nextInt(40)));
          yield "command";
        }
        case 2 -> {
          ((ObjectNode) o.get("env")).put(randomString(1 + rnd.nextInt(6)), randomString(20));
          yield "env";
        }
        case 3 -> {
          o.put("queue", randomString(1 + rnd.nextInt(10)));
          yield "queue";
        }
        case 4 -> {
          o.put("timeLimit", randomString(1 + rnd.nextInt(6)));
          yield "timeLimit";
        }
        case 5 -> {
          o.put("killSignal", randomString(1 + rnd.nextInt(6)));
          yield "killSignal";
        }
        case 6 -> {
          o.put("warnSignal", randomString(1 + rnd.nextInt(8)));
          yield "warnSignal";
        }
        case 7 -> {
          o.put("checkpointDir", "/" + randomString(1 + rnd.nextInt(20)));
          yield "checkpointDir";
        }
        case 8 -> {
          ((ArrayNode) o.get("excludeNodes")).add(randomString(1 + rnd.nextInt(10)));
          yield "excludeNodes";
        }
        default -> {
          o.put("user", randomString(1 + rnd.nextInt(10)));
          yield "user";
        }
      };
    }

    private JsonNode randomValue(int depth) {
      int kind = rnd.nextInt(depth > 0 ? 12 : 10);
      return switch (kind) {
        case 0 -> NODES.nullNode();
        case 1 -> NODES.booleanNode(rnd.nextBoolean());
        case 2 -> NODES.numberNode(rnd.nextInt(20) - 5);
        case 3 -> NODES.numberNode(rnd.nextLong());
        case 4 -> NODES.numberNode(new BigInteger(100 + rnd.nextInt(40), rnd));
        case 5 -> NODES.numberNode(rnd.nextDouble() * Math.pow(10, rnd.nextInt(40) - 10));
        case 6, 7 -> NODES.textNode(randomString(rnd.nextInt(30)));
        case 8 ->
            NODES.textNode(
                List.of(
                        "1h",
                        "90s",
                        "0",
                        "-1",
                        "1:30:00",
                        "H100",
                        "",
                        " ",
                        "x",
                        "USR1@120",
                        "SIGTERM",
                        "KILL",
                        "/ckpt")
                    .get(rnd.nextInt(13)));
        case 9 ->
            NODES.numberNode(
                List.of(0, 1, 64, 65, 4096, 4097, Integer.MAX_VALUE, Integer.MIN_VALUE)
                    .get(rnd.nextInt(8)));
        case 10 -> {
          ArrayNode a = NODES.arrayNode();
          int n = rnd.nextInt(4);
          for (int i = 0; i < n; i++) {
            a.add(randomValue(depth - 1));
          }
          yield a;
        }
        default -> {
          ObjectNode obj = NODES.objectNode();
          int n = rnd.nextInt(3);
          for (int i = 0; i < n; i++) {
            obj.set(
                rnd.nextBoolean() ? FIELDS[rnd.nextInt(FIELDS.length)] : randomString(5),
                randomValue(depth - 1));
          }
          yield obj;
        }
      };
    }

    /**
     * Random text: ASCII, controls, NUL, Latin, CJK, right-to-left, combining marks, emoji, and
     * lone surrogates (which JSON can carry as escapes).
     */
    private String randomString(int length) {
      var sb = new StringBuilder();
      for (int i = 0; i < length; i++) {
        int pick = rnd.nextInt(10);
        switch (pick) {
          case 0 -> sb.append((char) rnd.nextInt(0x20));
          case 1 -> sb.append((char) (0xD800 + rnd.nextInt(0x800)));
          case 2 -> sb.appendCodePoint(0x1F600 + rnd.nextInt(0x50));
          case 3 -> sb.append((char) (0x0590 + rnd.nextInt(0x100)));
          case 4 -> sb.append((char) (0x0300 + rnd.nextInt(0x70)));
          case 5 -> sb.append((char) (0x4E00 + rnd.nextInt(0x5000)));
          case 6 -> sb.append((char) (0xA0 + rnd.nextInt(0x160)));
          case 7 -> sb.append("\uFEFF\u202E\u200B".charAt(rnd.nextInt(3)));
          default -> sb.append((char) (0x20 + rnd.nextInt(0x5F)));
        }
      }
      return sb.toString();
    }

    /** Raw UTF-8 where it can be; with \\u escapes when the text holds a lone surrogate. */
    private static byte[] write(JsonNode node) {
      try {
        return TestApi.JSON.writeValueAsBytes(node);
      } catch (IOException lone) {
        try {
          return ESCAPING.writeValueAsBytes(node);
        } catch (IOException e) {
          throw new AssertionError(e);
        }
      }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper ESCAPING =
        com.fasterxml.jackson.databind.json.JsonMapper.builder()
            .enable(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII)
            .build();
  }
}
