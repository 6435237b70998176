package io.kairos.control.k8s;

import static io.kairos.control.k8s.KubeFixtures.args;
import static io.kairos.control.k8s.KubeFixtures.argsByName;
import static io.kairos.control.k8s.KubeFixtures.binding;
import static io.kairos.control.k8s.KubeFixtures.cpu;
import static io.kairos.control.k8s.KubeFixtures.dgx;
import static io.kairos.control.k8s.KubeFixtures.gangPod;
import static io.kairos.control.k8s.KubeFixtures.l4;
import static io.kairos.control.k8s.KubeFixtures.names;
import static io.kairos.control.k8s.KubeFixtures.pod;
import static io.kairos.control.k8s.KubeFixtures.tree;
import static io.kairos.control.k8s.KubeFixtures.uid;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kairos.control.Controller;
import io.kairos.control.ControllerConfig;
import io.kairos.control.Leaders;
import io.kairos.control.TestApi;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extender verbs against a real controller without an API server: bind only records. Each test
 * uses its own node and pod names, so tests sharing the controller's ledger do not meet.
 */
class K8sExtenderApiTest {
  static final String BASE = "/api/v1/k8s-extender/";
  @TempDir static Path dir;
  static Controller controller;
  static TestApi scheduler;

  @BeforeAll
  static void start() throws Exception {
    controller =
        Controller.start(
            ControllerConfig.single(dir, "127.0.0.1", 0).withRunAs(TestApi.SINGLE_USER));
    Leaders.awaitLeader(controller, Duration.ofSeconds(30));
    scheduler = new TestApi(controller.url(), extenderToken(controller));
  }

  /** An extender token, made by the admin: what kube-scheduler's extender calls carry. */
  static String extenderToken(Controller controller) {
    var created =
        new TestApi(controller.url(), controller.adminToken())
            .post("/api/v1/tokens", "{\"extender\": true}");
    assertThat(created.status()).as(created.body()).isEqualTo(201);
    return tree(created.body()).get("token").asText();
  }

  @AfterAll
  static void stop() throws Exception {
    controller.close();
  }

  static JsonNode ok(TestApi.Reply r) {
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    return tree(r.body());
  }

  static JsonNode filter(String body) {
    return ok(scheduler.post(BASE + "filter", body));
  }

  static JsonNode bind(ObjectNode pod, String node) {
    return ok(scheduler.post(BASE + "bind", binding(pod, node)));
  }

  @Test
  void filterWithWholeNodesPassesGpuNodesWithRoomAndAnswersTheNodesAsSent() {
    var sent = List.of(dgx("f-dgx"), l4("f-l4"), cpu("f-cpu"));
    JsonNode result = filter(args(pod("f-pod", 1, 100), sent.toArray(ObjectNode[]::new)));

    assertThat(names(result)).containsExactly("f-dgx", "f-l4");
    assertThat(result.get("NodeNames").isNull()).isTrue();
    assertThat(result.get("FailedAndUnresolvableNodes").path("f-cpu").asText())
        .contains("0 allocatable GPUs");
    assertThat(result.get("Error").asText()).isEmpty();
    // kube-scheduler uses the returned objects: every field comes back, not only those read.
    assertThat(result.at("/Nodes/items/0")).isEqualTo(sent.get(0));
    assertThat(result.at("/Nodes/items/1/status/nodeInfo/kubeletVersion").asText())
        .isEqualTo("v1.30.4");
  }

  @Test
  void filterWithNodeNamesUsesNodesSeenBeforeAndFailsUnknownOnes() {
    filter(args(pod("n-warm", 1, 100), dgx("n-dgx"), l4("n-l4")));

    JsonNode result = filter(argsByName(pod("n-pod", 2, 100), "n-dgx", "n-l4", "n-ghost"));

    assertThat(result.get("Nodes").isNull()).isTrue();
    assertThat(names(result)).containsExactly("n-dgx", "n-l4");
    assertThat(result.at("/FailedNodes/n-ghost").asText()).contains("does not know node n-ghost");
  }

  @Test
  void prioritizePrefersTheBestFit() {
    ObjectNode pod = pod("p-pod", 4, 100);
    var r = scheduler.post(BASE + "prioritize", args(pod, dgx("p-dgx"), l4("p-l4"), cpu("p-cpu")));
    assertThat(r.status()).as(r.body()).isEqualTo(200);
    List<Map<String, Object>> scores =
        r.as(new com.fasterxml.jackson.core.type.TypeReference<>() {});

    assertThat(scores)
        .containsExactly(
            Map.of("Host", "p-dgx", "Score", 5),
            Map.of("Host", "p-l4", "Score", 10),
            Map.of("Host", "p-cpu", "Score", 0));
  }

  @Test
  void bindWithoutAnApiServerRecordsThePodSoItsGpusAreTaken() {
    ObjectNode first = pod("b-first", 3, 100);
    filter(args(first, l4("b-l4")));
    assertThat(bind(first, "b-l4").get("Error").asText()).isEmpty();
    assertThat(bind(first, "b-l4").get("Error").asText()).as("idempotent").isEmpty();

    JsonNode second = filter(argsByName(pod("b-second", 2, 100), "b-l4"));
    assertThat(names(second)).isEmpty();
    assertThat(second.at("/FailedNodes/b-l4").asText()).contains("1 free GPUs");

    ObjectNode stranger = pod("b-stranger", 1, 100);
    assertThat(bind(stranger, "b-l4").get("Error").asText()).contains("has not filtered");
  }

  @Test
  void aGangOfTwoEightGpuPodsIsReservedOnTwoWholeNodesAndEachPodGoesToItsOwn() {
    ObjectNode[] nodes = {dgx("g-dgx1"), dgx("g-dgx2"), l4("g-l4")};
    ObjectNode w0 = gangPod("g-w0", "g-train", 2);
    ObjectNode w1 = gangPod("g-w1", "g-train", 2);

    JsonNode first = filter(args(w0, nodes));
    assertThat(names(first)).hasSize(1);
    String node0 = names(first).get(0);
    assertThat(node0).startsWith("g-dgx");
    assertThat(first.at("/FailedNodes/g-l4").asText()).contains("reserved on node " + node0);

    var scores = ok(scheduler.post(BASE + "prioritize", args(w0, nodes)));
    for (JsonNode s : scores) {
      assertThat(s.get("Score").asLong()).isEqualTo(s.get("Host").asText().equals(node0) ? 10 : 0);
    }

    // While reserved, the gang's second slot is held against other pods.
    JsonNode small = filter(args(pod("g-small", 1, 100), nodes));
    assertThat(names(small)).containsExactly("g-l4");

    JsonNode second = filter(args(w1, nodes));
    assertThat(names(second)).hasSize(1);
    String node1 = names(second).get(0);
    assertThat(node1).startsWith("g-dgx").isNotEqualTo(node0);

    assertThat(bind(w0, node0).get("Error").asText()).isEmpty();
    assertThat(bind(w1, node0).get("Error").asText()).contains("reserved on node " + node1);
    assertThat(bind(w1, node1).get("Error").asText()).isEmpty();

    JsonNode third = filter(args(gangPod("g-w2", "g-train", 2), nodes));
    assertThat(names(third)).isEmpty();
    assertThat(third.get("FailedNodes").size() + third.get("FailedAndUnresolvableNodes").size())
        .isEqualTo(3);
  }

  @Test
  void aGangThatDoesNotFitWholeFailsEveryNodeAndHoldsNothing() {
    ObjectNode[] nodes = {dgx("x-dgx"), l4("x-l4")};

    JsonNode result = filter(args(gangPod("x-w0", "x-big", 2), nodes));

    assertThat(names(result)).isEmpty();
    assertThat(result.get("FailedNodes").size()).isEqualTo(2);
    assertThat(result.at("/FailedNodes/x-dgx").asText())
        .contains("gang training/x-big")
        .contains("2 pods of 8 GPUs do not fit");
    // Nothing is half-held: an 8-GPU pod still fits the DGX.
    assertThat(names(filter(args(pod("x-solo", 8, 100), nodes)))).containsExactly("x-dgx");
  }

  @Test
  void aGangPodWithoutAValidSizeIsUnresolvable() {
    ObjectNode w = gangPod("s-w0", "s-gang", 2);
    ((ObjectNode) w.at("/metadata/annotations")).put("kairos.io/gang-size", "two");

    JsonNode result = filter(args(w, dgx("s-dgx")));

    assertThat(result.at("/FailedAndUnresolvableNodes/s-dgx").asText())
        .contains("kairos.io/gang-size");
  }

  @Test
  void preemptTrimsVictimsToTheFewestThatFreeEnoughGpusAndDropsNodesWithHigherPriorityVictims() {
    ObjectNode node = dgx("v-dgx");
    ObjectNode a = pod("v-a", 4, 10);
    ObjectNode b = pod("v-b", 2, 10);
    ObjectNode c = pod("v-c", 2, 10);
    for (ObjectNode p : List.of(a, b, c)) {
      filter(args(p, node));
      assertThat(bind(p, "v-dgx").get("Error").asText()).isEmpty();
    }
    ObjectNode other = l4("v-l4");
    ObjectNode high = pod("v-high", 4, 5000);
    filter(args(high, other));
    bind(high, "v-l4");
    ObjectNode preemptor = pod("v-pre", 4, 1000);

    // nodeCacheCapable: victims by UID.
    var meta = KubeFixtures.JSON.createObjectNode();
    meta.set("Pod", preemptor);
    var byNode = meta.putObject("NodeNameToMetaVictims");
    var onDgx = byNode.putObject("v-dgx");
    var pods = onDgx.putArray("Pods");
    for (ObjectNode p : List.of(b, a, c)) {
      pods.addObject().put("UID", uid(p));
    }
    onDgx.put("NumPDBViolations", 1);
    byNode
        .putObject("v-l4")
        .put("NumPDBViolations", 0)
        .putArray("Pods")
        .addObject()
        .put("UID", uid(high));
    JsonNode result = ok(scheduler.post(BASE + "preempt", meta.toString()));

    assertThat(result.get("NodeNameToMetaVictims").size()).isEqualTo(1);
    assertThat(result.at("/NodeNameToMetaVictims/v-dgx/Pods/0/UID").asText()).isEqualTo(uid(a));
    assertThat(result.at("/NodeNameToMetaVictims/v-dgx/Pods").size()).isEqualTo(1);
    assertThat(result.at("/NodeNameToMetaVictims/v-dgx/NumPDBViolations").asLong()).isEqualTo(1);

    // Not nodeCacheCapable: the victims come whole; a 6-GPU preemptor needs a and one of b, c.
    var whole = KubeFixtures.JSON.createObjectNode();
    whole.set("Pod", pod("v-pre6", 6, 1000));
    var victims = whole.putObject("NodeNameToVictims").putObject("v-dgx");
    victims.putArray("Pods").add(c).add(b).add(a);
    victims.put("NumPDBViolations", 0);
    JsonNode result6 = ok(scheduler.post(BASE + "preempt", whole.toString()));
    var kept = new java.util.ArrayList<String>();
    result6.at("/NodeNameToMetaVictims/v-dgx/Pods").forEach(p -> kept.add(p.get("UID").asText()));
    assertThat(kept).containsExactlyInAnyOrder(uid(a), uid(b));
  }

  @Test
  void badBodiesAre400ProblemsNamingTheField() {
    var malformed = scheduler.post(BASE + "filter", "{\"Pod\": ");
    assertThat(malformed.status()).isEqualTo(400);
    assertThat(malformed.contentType()).startsWith("application/problem+json");

    var noPod = scheduler.post(BASE + "filter", "{\"NodeNames\": [\"a\"]}");
    assertThat(noPod.status()).isEqualTo(400);
    assertThat(tree(noPod.body()).get("field").asText()).isEqualTo("Pod");

    ObjectNode badContainers = pod("bad-1", 1, 0);
    ((ObjectNode) badContainers.get("spec")).put("containers", "jupyter");
    var wrongType = scheduler.post(BASE + "filter", argsByName(badContainers, "x"));
    assertThat(wrongType.status()).isEqualTo(400);
    assertThat(tree(wrongType.body()).get("field").asText()).isEqualTo("Pod.spec.containers");

    ObjectNode fractional = dgx("bad-dgx");
    ((ObjectNode) fractional.at("/status/allocatable")).put("nvidia.com/gpu", "1.5");
    var badQuantity = scheduler.post(BASE + "filter", args(pod("bad-2", 1, 0), fractional));
    assertThat(badQuantity.status()).isEqualTo(400);
    assertThat(tree(badQuantity.body()).get("field").asText())
        .isEqualTo("Nodes.items[0].status.allocatable.nvidia.com/gpu");

    var unknown = scheduler.post(BASE + "bind", "{\"PodName\": \"p\", \"Pod\": 1}");
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(tree(unknown.body()).get("field").asText()).isEqualTo("Pod");

    var missing = scheduler.post(BASE + "bind", "{\"PodName\": \"p\", \"PodNamespace\": \"ns\"}");
    assertThat(missing.status()).isEqualTo(400);
    assertThat(tree(missing.body()).get("field").asText()).isEqualTo("PodUID");

    var neither = scheduler.post(BASE + "filter", "{\"Pod\": " + pod("bad-3", 1, 0) + "}");
    assertThat(neither.status()).isEqualTo(400);
    assertThat(tree(neither.body()).get("field").asText()).isEqualTo("Nodes");

    var victimsNotAMap =
        scheduler.post(
            BASE + "preempt", "{\"Pod\": " + pod("bad-4", 1, 0) + ", \"NodeNameToVictims\": []}");
    assertThat(victimsNotAMap.status()).isEqualTo(400);
    assertThat(tree(victimsNotAMap.body()).get("field").asText()).isEqualTo("NodeNameToVictims");

    var nullBody = scheduler.post(BASE + "filter", "null");
    assertThat(nullBody.status()).isEqualTo(400);
  }

  /**
   * The extender's verbs take its own credential only: a user's token, an admin's, the join token
   * and a node's secret are 403; a token in the query string is 401, even the extender's own.
   */
  @Test
  void onlyTheExtendersOwnCredentialInTheHeaderReachesItsVerbs() {
    String body = argsByName(pod("t-pod", 0, 0), "t-node");
    assertThat(scheduler.post(BASE + "filter", body).status()).isEqualTo(200);
    assertThat(scheduler.as(null).post(BASE + "filter", body).status()).isEqualTo(401);
    assertThat(scheduler.as(null).post(BASE + "filter?token=" + scheduler.token(), body).status())
        .as("never from the query string")
        .isEqualTo(401);
    assertThat(scheduler.as(controller.joinToken()).post(BASE + "filter", body).status())
        .isEqualTo(403);
    assertThat(scheduler.as(controller.adminToken()).post(BASE + "filter", body).status())
        .isEqualTo(403);
    var created =
        scheduler.as(controller.adminToken()).post("/api/v1/tokens", "{\"user\": \"alice\"}");
    String userToken = tree(created.body()).get("token").asText();
    assertThat(scheduler.as(userToken).post(BASE + "filter", body).status()).isEqualTo(403);
    // And the extender's token reaches nothing else.
    assertThat(scheduler.get("/api/v1/jobs").status()).isEqualTo(403);
    assertThat(scheduler.post("/api/v1/agents/heartbeat", "{}").status()).isEqualTo(403);
  }
}
