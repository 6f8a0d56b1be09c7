#!/usr/bin/env node
// A separate CDK app that adds a Triton GPU multi-model endpoint to existing infrastructure.
// Run from this directory: npx cdk synth (edit EXAMPLE_PROPS, or pass your own values, first).

import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EXAMPLE_PROPS, ExistingAppStack } from './existing-app-stack';

const app = new App();
new ExistingAppStack(app, 'RecommendationsMme', EXAMPLE_PROPS);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
