import { Event, WebhookTestData } from './events/schemas.js';
import { problemSchemaList } from './http/problem-schemas.js';
import { RATE_LIMIT_PROBLEM_MEMBERS } from './ratelimit/problems.js';
import { VERSION_PROBLEM_MEMBERS } from './versions/problems.js';
import { NewOrder, Order } from './orders/schemas.js';
import { Pet } from './pets/schemas.js';
import { ClockAdvance, TestClock, TestDataRemoved, TestKey, TestKeyLimits } from './test-mode/schemas.js';
import { ReportCard } from './report-card/schemas.js';
import { Scenario, ScenarioCatalogue, ScenarioStep, Script, ScriptRequest } from './scenarios/schemas.js';
import { WebhookExam } from './report-card/exam.js';
import { Usage } from './usage/schemas.js';
import { LogEntry } from './request-log/entry.js';
import { Version } from './versions/routes.js';
import {
  Delivery as WebhookDelivery,
  Endpoint as WebhookEndpoint,
  EndpointPatch,
  EndpointWithSecret,
  NewEndpoint,
} from './webhooks/schemas.js';

/** Schemas with an `$id`: registered once, referenced by routes, named components of the document. */
export const NAMED_SCHEMAS = [
  ...problemSchemaList({ ...RATE_LIMIT_PROBLEM_MEMBERS, ...VERSION_PROBLEM_MEMBERS }),
  Pet,
  Order,
  NewOrder,
  Event,
  WebhookTestData,
  WebhookEndpoint,
  EndpointWithSecret,
  NewEndpoint,
  EndpointPatch,
  WebhookDelivery,
  Usage,
  Version,
  TestClock,
  ClockAdvance,
  TestDataRemoved,
  TestKey,
  TestKeyLimits,
  ReportCard,
  WebhookExam,
  ScenarioStep,
  ScriptRequest,
  Script,
  Scenario,
  ScenarioCatalogue,
  LogEntry,
];
