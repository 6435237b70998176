package io.kairos.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.Javalin;
import io.kairos.control.api.Api;
import io.kairos.control.api.Submissions;
import io.kairos.protocol.ClusterInfo;
import io.kairos.protocol.GpuDevice;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeState;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.Problem;
import io.kairos.protocol.QueueView;
import io.kairos.protocol.SubmitResult;
import io.kairos.protocol.TaskPlacement;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.TokenRequest;
import io.kairos.protocol.UtilizationPoint;
import io.kairos.protocol.UtilizationView;
import io.kairos.protocol.WhoAmI;
import io.kairos.protocol.agent.ExitReason;
import io.kairos.protocol.agent.Heartbeat;
import io.kairos.protocol.agent.HeartbeatReply;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import io.kairos.protocol.agent.TaskAssignment;
import io.kairos.protocol.agent.TaskKill;
import io.kairos.protocol.agent.TaskRef;
import io.kairos.protocol.agent.TaskReport;
import io.kairos.protocol.agent.TaskStatus;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The OpenAPI document ({@code src/main/resources/openapi.json}, served at {@code GET
 * /api/v1/openapi.json}) against the code: every route, every wire record, every {@code $ref}.
 */
class OpenApiDocumentTest {
  /**
   * Every route the api package registers, as "METHOD path", taken from JobRoutes, NodeRoutes,
   * AgentRoutes, SystemRoutes, TokenRoutes, UserRoutes, EventRoutes, LimitRoutes, ConfigRoutes,
   * ReplicaRoutes and K8sExtenderRoutes. A new route must be added here AND to openapi.json: the
   * tests below compare this list with both the document and the routes {@link Api#create}
   * registers.
   */
  static final List<String> ROUTES =
      List.of(
          "POST /api/v1/jobs",
          "GET /api/v1/jobs",
          "GET /api/v1/jobs/{id}",
          "POST /api/v1/jobs/{id}/cancel",
          "GET /api/v1/jobs/{id}/logs",
          "POST /api/v1/jobs/{id}/checkpoints",
          "GET /api/v1/jobs/{id}/checkpoints",
          "POST /api/v1/jobs/{id}/steps",
          "GET /api/v1/jobs/{id}/steps",
          "GET /api/v1/jobs/{id}/steps/{step}",
          "GET /api/v1/jobs/{id}/steps/{step}/output",
          "POST /api/v1/jobs/{id}/steps/{step}/cancel",
          "GET /api/v1/nodes",
          "POST /api/v1/nodes/{name}/drain",
          "POST /api/v1/nodes/{name}/resume",
          "POST /api/v1/nodes/{name}/gpus/{gpu}/resume",
          "POST /api/v1/nodes/{name}/reset",
          "GET /api/v1/queues",
          "GET /api/v1/accounts",
          "POST /api/v1/agents/register",
          "POST /api/v1/agents/heartbeat",
          "GET /healthz",
          "GET /readyz",
          "GET /metrics",
          "GET /api/v1/openapi.json",
          "GET /api/v1/ca.pem",
          "GET /api/v1/whoami",
          "GET /api/v1/cluster",
          "POST /api/v1/tokens",
          "GET /api/v1/tokens",
          "DELETE /api/v1/tokens/{id}",
          "GET /api/v1/users",
          "PUT /api/v1/users/{name}",
          "GET /api/v1/limits",
          "PUT /api/v1/limits",
          "GET /api/v1/config",
          "POST /api/v1/config",
          "GET /api/v1/config/history",
          "GET /api/v1/replicas",
          "POST /api/v1/replicas",
          "DELETE /api/v1/replicas/{address}",
          "GET /api/v1/history",
          "GET /api/v1/report",
          "GET /api/v1/stats/utilization",
          "GET /api/v1/events",
          "POST /api/v1/k8s-extender/filter",
          "POST /api/v1/k8s-extender/prioritize",
          "POST /api/v1/k8s-extender/bind",
          "POST /api/v1/k8s-extender/preempt");

  /** The routes that need no token ({@code security: []} in the document). */
  static final Set<String> UNAUTHENTICATED =
      Set.of(
          "GET /healthz",
          "GET /readyz",
          "GET /metrics",
          "GET /api/v1/openapi.json",
          "GET /api/v1/ca.pem");

  static final Set<String> HTTP_METHODS =
      Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");

  static final ObjectMapper JSON = new ObjectMapper();
  static JsonNode doc;

  @BeforeAll
  static void load() throws IOException {
    try (InputStream in = OpenApiDocumentTest.class.getResourceAsStream("/openapi.json")) {
      assertThat(in).as("openapi.json on the classpath").isNotNull();
      doc = JSON.readTree(in);
    }
  }

  @Test
  void isOpenApi31() {
    assertThat(doc.path("openapi").asText()).startsWith("3.1.");
    assertThat(doc.path("info").path("title").asText()).isNotBlank();
    assertThat(doc.path("info").path("version").asText()).isNotBlank();
  }

  @Test
  void documentsExactlyTheRoutesOfTheApiPackage() {
    assertThat(documentedRoutes()).containsExactlyInAnyOrderElementsOf(ROUTES);
  }

  @Test
  void theListAboveIsWhatTheApiRegisters() {
    // Routes are registered when the app is created; nothing is started, no handler runs.
    Javalin app = Api.create(null, null, config -> {});
    var registered = new ArrayList<String>();
    for (var parsed : app.unsafe.internalRouter.allHttpHandlers()) {
      var endpoint = parsed.endpoint;
      if (endpoint.method.isHttpMethod()) {
        registered.add(endpoint.method.name() + " " + endpoint.path);
      }
    }
    assertThat(registered).containsExactlyInAnyOrderElementsOf(ROUTES);
  }

  @Test
  void everyRefResolvesToAComponent() {
    var refs = new TreeSet<String>();
    collectRefs(doc, refs);
    assertThat(refs).isNotEmpty();
    for (String ref : refs) {
      assertThat(ref).as("a local component reference").startsWith("#/components/");
      assertThat(doc.at(JsonPointer.compile(ref.substring(1))).isMissingNode())
          .as("%s resolves", ref)
          .isFalse();
    }
  }

  @Test
  void everySchemaComponentIsUsed() {
    var refs = new TreeSet<String>();
    collectRefs(doc, refs);
    doc.path("components")
        .path("schemas")
        .fieldNames()
        .forEachRemaining(
            name ->
                assertThat(refs)
                    .as("schema %s is referenced", name)
                    .contains("#/components/schemas/" + name));
  }

  @Test
  void everyOperationNamesItsRoleAndOnlyHealthMetricsThisDocumentAndTheCaGoWithoutAToken() {
    assertThat(
            doc.path("components").path("securitySchemes").path("bearer").path("scheme").asText())
        .isEqualTo("bearer");
    assertThat(doc.path("security").toString()).isEqualTo("[{\"bearer\":[]}]");
    var open = new HashSet<String>();
    forEachOperation(
        (route, op) -> {
          String role = op.path("x-kairos-role").asText();
          assertThat(role)
              .as("%s x-kairos-role", route)
              .isIn("user", "admin", "agent", "node", "extender", "any", "none");
          String description = op.path("description").asText();
          if (role.equals("none")) {
            assertThat(op.path("security").isArray() && op.path("security").isEmpty())
                .as("%s has security: []", route)
                .isTrue();
            open.add(route);
          } else {
            assertThat(op.has("security"))
                .as("%s uses the global bearer security", route)
                .isFalse();
            assertThat(description).as("%s description names its role", route).startsWith("Role: ");
            assertThat(op.path("responses").has("401")).as("%s documents 401", route).isTrue();
          }
        });
    assertThat(open).isEqualTo(UNAUTHENTICATED);
  }

  @Test
  void errorsAreProblemDetails() {
    forEachOperation(
        (route, op) ->
            op.path("responses")
                .properties()
                .forEach(
                    e -> {
                      int status = Integer.parseInt(e.getKey());
                      if (status < 400 || route.equals("GET /readyz")) {
                        return;
                      }
                      JsonNode response = resolve(e.getValue());
                      assertThat(
                              response
                                  .path("content")
                                  .path("application/problem+json")
                                  .path("schema")
                                  .path("$ref")
                                  .asText())
                          .as("%s %s", route, status)
                          .isEqualTo("#/components/schemas/Problem");
                    }));
  }

  @Test
  void agentEndpointsDocumentTheRedirectToTheLeader() {
    for (String path : List.of("/api/v1/agents/register", "/api/v1/agents/heartbeat")) {
      JsonNode response =
          resolve(doc.path("paths").path(path).path("post").path("responses").path("421"));
      assertThat(response.path("headers").has("Kairos-Leader")).as(path).isTrue();
    }
  }

  @Test
  void submissionBoundsAreTheValidatorsBounds() {
    JsonNode p = schema("JobSubmission").path("properties");
    assertThat(schema("JobSubmission").path("additionalProperties").asBoolean(true)).isFalse();
    assertThat(schema("JobSubmission").path("required").toString()).isEqualTo("[\"command\"]");
    assertThat(p.path("gpus").path("maximum").asInt()).isEqualTo(Submissions.MAX_GPUS);
    assertThat(p.path("gpusPerNode").path("maximum").asInt())
        .isEqualTo(Submissions.MAX_GPUS_PER_NODE);
    assertThat(p.path("command").path("maxItems").asInt()).isEqualTo(Submissions.MAX_ARGS);
    assertThat(p.path("command").path("items").path("maxLength").asInt())
        .isEqualTo(Submissions.MAX_ARG_CHARS);
    assertThat(p.path("env").path("maxProperties").asInt()).isEqualTo(Submissions.MAX_ENV);
    assertThat(p.path("env").path("additionalProperties").path("maxLength").asInt())
        .isEqualTo(Submissions.MAX_ENV_VALUE_CHARS);
    assertThat(p.path("gracePeriod").path("maximum").asLong()).isEqualTo(Submissions.MAX_GRACE_SEC);
    assertThat(p.path("maxRestarts").path("maximum").asInt()).isEqualTo(Submissions.MAX_RESTARTS);
    assertThat(p.path("excludeNodes").path("maxItems").asInt()).isEqualTo(4096);
    assertThat(p.path("killSignal").path("enum"))
        .extracting(JsonNode::asText)
        .containsExactlyElementsOf(Submissions.SIGNALS);
    JsonNode batch =
        doc.at("/paths/~1api~1v1~1jobs/post/requestBody/content/application~1json/schema/oneOf/1");
    assertThat(batch.path("minItems").asInt()).isEqualTo(1);
    assertThat(batch.path("maxItems").asInt()).isEqualTo(10_000);
  }

  static Stream<Arguments> records() {
    return Stream.of(
        Arguments.of("JobSubmission", JobSubmission.class),
        Arguments.of("JobView", JobView.class),
        Arguments.of("NodeView", NodeView.class),
        Arguments.of("TaskPlacement", TaskPlacement.class),
        Arguments.of("QueueView", QueueView.class),
        Arguments.of("QueueQuota", QueueView.Quota.class),
        Arguments.of("AccountView", io.kairos.protocol.AccountView.class),
        Arguments.of("SubmitResult", SubmitResult.class),
        Arguments.of("Problem", Problem.class),
        Arguments.of("TokenRequest", TokenRequest.class),
        Arguments.of("TokenCreated", TokenCreated.class),
        Arguments.of("TokenView", io.kairos.protocol.TokenView.class),
        Arguments.of("NodeCredential", io.kairos.protocol.agent.NodeCredential.class),
        Arguments.of("WhoAmI", WhoAmI.class),
        Arguments.of("ClusterInfo", ClusterInfo.class),
        Arguments.of("GpuDevice", GpuDevice.class),
        Arguments.of("Registration", Registration.class),
        Arguments.of("Registered", Registered.class),
        Arguments.of("Heartbeat", Heartbeat.class),
        Arguments.of("HeartbeatReply", HeartbeatReply.class),
        Arguments.of("TaskAssignment", TaskAssignment.class),
        Arguments.of("TaskKill", TaskKill.class),
        Arguments.of("TaskRef", TaskRef.class),
        Arguments.of("TaskReport", TaskReport.class),
        Arguments.of("StepSubmission", io.kairos.protocol.StepSubmission.class),
        Arguments.of("StepView", io.kairos.protocol.StepView.class),
        Arguments.of("StepOutput", io.kairos.protocol.StepOutput.class),
        Arguments.of("StepOutputChunk", io.kairos.protocol.StepOutput.Chunk.class),
        Arguments.of("DrainRequest", drainRequest()),
        Arguments.of("CheckpointSpec", io.kairos.protocol.CheckpointSpec.class),
        Arguments.of("CheckpointReport", io.kairos.protocol.CheckpointReport.class),
        Arguments.of("CheckpointView", io.kairos.protocol.CheckpointView.class),
        Arguments.of("ElasticView", io.kairos.protocol.ElasticView.class),
        Arguments.of("CheckpointList", io.kairos.protocol.CheckpointList.class),
        Arguments.of("TaskCheckpoint", io.kairos.protocol.agent.TaskCheckpoint.class),
        Arguments.of("UtilizationView", UtilizationView.class),
        Arguments.of("UtilizationPoint", UtilizationPoint.class),
        Arguments.of("UserView", io.kairos.protocol.UserView.class),
        Arguments.of("UserUpdate", io.kairos.protocol.UserUpdate.class),
        Arguments.of("LimitsView", io.kairos.protocol.LimitsView.class),
        Arguments.of("LimitsUpdate", io.kairos.protocol.LimitsUpdate.class),
        Arguments.of("UserLimits", io.kairos.protocol.LimitsView.UserLimits.class),
        Arguments.of("ConfigView", io.kairos.protocol.ConfigView.class),
        Arguments.of("ConfigUpdate", io.kairos.protocol.ConfigUpdate.class),
        Arguments.of("ConfigChange", io.kairos.protocol.ConfigChange.class),
        Arguments.of("ReplicaView", io.kairos.protocol.ReplicaView.class),
        Arguments.of("ReplicaRequest", io.kairos.protocol.ReplicaRequest.class),
        Arguments.of("HistoryRecord", io.kairos.protocol.HistoryRecord.class),
        Arguments.of("JobAttempt", io.kairos.protocol.HistoryRecord.JobAttempt.class),
        Arguments.of("UsageReport", io.kairos.protocol.UsageReport.class),
        Arguments.of("UsageRow", io.kairos.protocol.UsageReport.UsageRow.class));
  }

  /**
   * A schema's properties are the record's components, with matching JSON types; primitives are
   * required (they are always sent, and the controller's strict reader refuses them missing).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("records")
  void schemaMatchesItsRecord(String name, Class<?> record) {
    JsonNode schema = schema(name);
    assertThat(schema.path("type").asText()).isEqualTo("object");
    var names = new ArrayList<String>();
    schema.path("properties").fieldNames().forEachRemaining(names::add);
    List<String> components =
        Arrays.stream(record.getRecordComponents()).map(RecordComponent::getName).toList();
    assertThat(names).as("%s properties", name).containsExactlyInAnyOrderElementsOf(components);

    var required = new HashSet<String>();
    schema.path("required").forEach(r -> required.add(r.asText()));
    assertThat(components).as("%s required fields exist", name).containsAll(required);
    for (RecordComponent c : record.getRecordComponents()) {
      JsonNode property = schema.path("properties").path(c.getName());
      String where = name + "." + c.getName();
      if (c.getType().isPrimitive()) {
        assertThat(required).as("%s is primitive, so required", where).contains(c.getName());
      }
      checkType(where, c.getType(), property);
    }
  }

  @Test
  void enumsMatchTheirJavaEnums() {
    for (var e :
        Map.of(
                "JobState",
                JobState.class,
                "NodeState",
                NodeState.class,
                "TaskStatus",
                TaskStatus.class,
                "ExitReason",
                ExitReason.class)
            .entrySet()) {
      var values = new ArrayList<String>();
      schema(e.getKey()).path("enum").forEach(v -> values.add(v.asText()));
      assertThat(values)
          .as(e.getKey())
          .containsExactly(
              Arrays.stream(e.getValue().getEnumConstants())
                  .map(Enum::name)
                  .toArray(String[]::new));
    }
  }

  // ---- helpers ----

  private static void checkType(String where, Class<?> type, JsonNode property) {
    if (type.isEnum() || type.isRecord()) {
      assertThat(property.path("$ref").asText())
          .as(where)
          .isEqualTo("#/components/schemas/" + type.getSimpleName());
      return;
    }
    Set<String> types = new HashSet<>();
    if (property.path("type").isArray()) {
      property.path("type").forEach(t -> types.add(t.asText()));
    } else {
      types.add(property.path("type").asText());
    }
    String expected;
    String format = null;
    if (type == int.class || type == Integer.class) {
      expected = "integer";
      format = "int32";
    } else if (type == long.class || type == Long.class) {
      expected = "integer";
      format = "int64";
    } else if (type == double.class || type == Double.class) {
      expected = "number";
      format = "double";
    } else if (type == Number.class) {
      expected = "number";
    } else if (type == boolean.class || type == Boolean.class) {
      expected = "boolean";
    } else if (type == String.class) {
      expected = "string";
    } else if (List.class.isAssignableFrom(type)) {
      expected = "array";
    } else if (Map.class.isAssignableFrom(type)) {
      expected = "object";
    } else {
      throw new AssertionError(where + ": no JSON type known for " + type);
    }
    assertThat(types).as("%s type", where).contains(expected);
    if (format != null) {
      assertThat(property.path("format").asText()).as("%s format", where).isEqualTo(format);
    }
  }

  private static Class<?> drainRequest() {
    try {
      return Class.forName("io.kairos.control.api.NodeRoutes$DrainRequest");
    } catch (ClassNotFoundException e) {
      throw new AssertionError("the drain body record moved: update OpenApiDocumentTest", e);
    }
  }

  private static JsonNode schema(String name) {
    JsonNode schema = doc.path("components").path("schemas").path(name);
    assertThat(schema.isMissingNode()).as("schema %s", name).isFalse();
    return schema;
  }

  private static JsonNode resolve(JsonNode node) {
    return node.has("$ref")
        ? doc.at(JsonPointer.compile(node.path("$ref").asText().substring(1)))
        : node;
  }

  private static List<String> documentedRoutes() {
    var routes = new ArrayList<String>();
    forEachOperation((route, op) -> routes.add(route));
    return routes;
  }

  private interface OperationVisitor {
    void visit(String route, JsonNode operation);
  }

  private static void forEachOperation(OperationVisitor visitor) {
    doc.path("paths")
        .properties()
        .forEach(
            path ->
                path.getValue()
                    .properties()
                    .forEach(
                        op -> {
                          if (HTTP_METHODS.contains(op.getKey())) {
                            visitor.visit(
                                op.getKey().toUpperCase(java.util.Locale.ROOT)
                                    + " "
                                    + path.getKey(),
                                op.getValue());
                          }
                        }));
  }

  private static void collectRefs(JsonNode node, Set<String> refs) {
    if (node.isObject()) {
      node.properties()
          .forEach(
              e -> {
                if (e.getKey().equals("$ref") && e.getValue().isTextual()) {
                  refs.add(e.getValue().asText());
                } else {
                  collectRefs(e.getValue(), refs);
                }
              });
    } else if (node.isArray()) {
      node.forEach(child -> collectRefs(child, refs));
    }
  }
}
