package io.kairos.core.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package rules of STYLE.md section 2, checked on the compiled core: the model depends on
 * nothing else in Kairos, the core on nothing outside the JDK, the scheduling pass never writes
 * cluster state, and no two core packages depend on each other.
 */
class ArchitectureTest {
  private static JavaClasses core;

  @BeforeAll
  static void importCore() {
    core =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.kairos.core");
  }

  @Test
  void modelDependsOnlyOnTheJdkAndChecks() {
    classes()
        .that()
        .resideInAPackage("io.kairos.core.model..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("java..", "io.kairos.core.model..", "io.kairos.core")
        .check(core);
  }

  @Test
  void coreDependsOnNothingButTheJdk() {
    classes()
        .that()
        .resideInAPackage("io.kairos.core..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("java..", "io.kairos.core..")
        .check(core);
  }

  @Test
  void schedulingNeverTouchesTheStoreOrTheReducer() {
    noClasses()
        .that()
        .resideInAPackage("io.kairos.core.sched..")
        .should()
        .dependOnClassesThat()
        .haveFullyQualifiedName("io.kairos.core.state.ClusterStore")
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("io.kairos.core.state.Reducer")
        .check(core);
  }

  @Test
  void modelDoesNotKnowAboutSchedulingOrState() {
    noClasses()
        .that()
        .resideInAPackage("io.kairos.core.model..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.kairos.core.sched..", "io.kairos.core.state..")
        .check(core);
  }

  /**
   * No package cycles in the core: every core package is a slice ({@code core} itself, {@code
   * core.sched}, {@code core.sched.order}, ...: the pass and each of its stage packages apart), and
   * the slices form a DAG.
   */
  @Test
  void corePackagesAreFreeOfCycles() {
    slices().matching("io.kairos.(**)").should().beFreeOfCycles().check(core);
  }
}
